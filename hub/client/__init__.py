"""Calling other A2A agents."""

from hub.client.jsonrpc import JsonRpcClient, user_message

__all__ = ["JsonRpcClient", "user_message"]
