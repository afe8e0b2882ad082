"""The NATS transport: the node, the ``Mesh`` client, the catalog, durable calls, the embedded broker.

Internal: tools and plugins use the names of ``toolmesh.__all__``.  Built on the call pipeline
(``toolmesh._pipeline``); the pipeline never imports from here.
"""
