"""Trust between the hub and its partners: TLS to a partner (a private CA, mutual TLS) and
the hub's signed card.

```python
context = entry.tls.ssl_context()          # the partner's HTTP client and gRPC channel
card = CardSigner.from_settings(settings.card.signing).sign(card)   # hub.trust.signing
```

Signing needs the `identity` extra (joserfc, rfc8785), imported only by the modules that
use it; the TLS part needs nothing beyond the standard library.
"""

from hub.trust.extra import require_identity_extra
from hub.trust.tls import PartnerTls, TlsPem

__all__ = ["PartnerTls", "TlsPem", "require_identity_extra"]
