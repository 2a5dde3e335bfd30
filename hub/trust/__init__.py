"""Trust between the hub and its partners: TLS to a partner (a private CA, mutual TLS).

```python
context = entry.tls.ssl_context()          # the partner's HTTP client and gRPC channel
```
"""

from hub.trust.tls import PartnerTls, TlsPem

__all__ = ["PartnerTls", "TlsPem"]
