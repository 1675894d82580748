"""The memory providers kioku ships: `local_vectors` (semantic recall from a local
embeddings server, no cloud) and `supermemory`."""
