"""Who is who and who may talk to kioku: persons, identities, pairing and link codes,
web sign-in tokens, and forgetting a person."""
