"""Matrix (any homeserver: Synapse, Conduit, matrix.org) through matrix-nio, with end-to-end
encryption: the session and the device's keys are kept under `$KIOKU_HOME/matrix/`."""
