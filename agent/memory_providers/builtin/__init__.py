"""The memory providers kioku ships, each imported only when enabled: `local_vectors`
(semantic recall from a local embeddings server, no cloud) and `supermemory`."""
