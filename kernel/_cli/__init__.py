"""The ``toolmesh`` command line: its commands, the options every command shares, plugin commands.

Internal: plugins declare their options with the public ``NatsOption``/``PrefixOption``/``JsonOption``.
The top layer: it may use the transport, the pipeline and telemetry; nothing imports it.
"""
