"""The local CLI socket, no SDK: `adapter` (the daemon's end), `protocol` (the frames,
shared with the `kioku` client), `framer` (lines within a frame's limit) and `uploads`
(files arriving in `attach` frames).
"""
