"""External memory providers: plug-ins beside kioku's own three memory layers.

`base` is the protocol a provider implements; the rest of this package loads the
configured ones, keeps each inside its own scope and time limits, and mirrors turns to
them in the background. The providers themselves live in `builtin/` (and in other
packages, through the `kioku.memory_providers` entry point group).
"""
