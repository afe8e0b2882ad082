"""The call pipeline and its hooks: the kernel, the plugin manager, validation, caching, admission.

Internal: tools and plugins use the names of ``toolmesh.__all__``.  Nothing here knows NATS; the
transport (``toolmesh._transport``) puts this pipeline on the network.
"""
