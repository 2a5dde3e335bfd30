"""Identity a company plugs in: tokens in and tokens out.

In: `verifier` checks JWT bearer tokens from an OpenID Connect issuer (`auth.oidc`) against
the keys `keys` reads and keeps, and names the caller they let in. It needs the `identity`
extra (joserfc): `hub.server.auth` imports it only when `auth.oidc` is set.

Out: the tokens the hub sends partners (docs/identity.md): `partner_auth.PartnerAuth` gives
each call to a partner its `Authorization`, a token obtained by the client credentials grant
(`auth.oauth2`) or the caller's token exchanged (RFC 8693) or forwarded (`on_behalf`), from
the token endpoints of `tokens`. These need httpx only.

It sits beside the store and the registry: it reads the settings and nothing above them.
"""
