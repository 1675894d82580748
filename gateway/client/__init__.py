"""The `kioku` commands' side of the daemon's socket: the client that speaks the protocol
(socket_client.py), the files a `kioku chat` message carries (attach_files.py), and the
shape a status frame must have before anything of it is printed (status_shape.py).
Nothing here prints or exits: gateway/cli does.
"""
