from __future__ import annotations

from tests.client.conftest import http, partner_url

__all__ = ["http", "partner_url"]
