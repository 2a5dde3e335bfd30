"""Trust between the hub and its partners: TLS to a partner (a private CA, mutual TLS) and
signed agent cards (the hub's own, signed; partners', verified).

```python
context = entry.tls.ssl_context()          # the partner's HTTP client and gRPC channel
card = CardSigner.from_settings(settings.card.signing).sign(card)   # hub.trust.signing
await CardVerifier(entry.verify_card, http).verify(name, card)      # hub.trust.verify
```

The signing and verifying parts need the `identity` extra (joserfc, rfc8785); the TLS part
needs nothing beyond the standard library.
"""

from hub.trust.card_keys import SIGNATURE_ALGORITHMS, CardKeys
from hub.trust.extra import require_identity_extra
from hub.trust.tls import PartnerTls, TlsPem

__all__ = ["SIGNATURE_ALGORITHMS", "CardKeys", "PartnerTls", "TlsPem", "require_identity_extra"]
