"""Benchmark harness: the hub against the official SDK reference agent."""
