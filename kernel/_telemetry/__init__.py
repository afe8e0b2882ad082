"""Telemetry: OpenTelemetry traces and metrics, their export, and process logging.

Internal: tools and plugins use the names of ``toolmesh.__all__``.  Imports nothing else of the kernel
but its errors, so every layer above may use it.
"""
