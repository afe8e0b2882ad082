"""The console's web application: pages rendered on the server, a live stream, and a small JSON API."""

from __future__ import annotations

import json
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.resources import files
from typing import Any

import anyio
import anyio.to_thread
import jinja2
import msgspec
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from toolmesh import Settings, redact_issues, schema_issues

from .access import ConsoleAccess
from .catalog_view import public_meta, public_view
from .live_feed import ENDS
from .mesh_view import MeshView, open_mesh_view
from .pipeline_steps import derive_steps
from .schema_outline import schema_outline

__all__ = ["LIVE_BATCH_INTERVAL", "LIVE_BATCH_ROWS", "PAGE_SIZE", "create_app"]

PAGE_SIZE = 500
"""Catalog rows per page: the page stays light with any number of tools."""

LIVE_BATCH_INTERVAL = 0.25
"""Seconds between two batches of the live stream: the browser redraws at most this often."""

LIVE_BATCH_ROWS = 500
"""Most rows one batch carries; a stream further behind skips to the latest rows and says how many."""

_PACKAGE = "toolmesh.plugins.console"


def _templates() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader(_PACKAGE, "templates"),
        autoescape=True,
        enable_async=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["when"] = lambda at: time.strftime("%H:%M:%S", time.localtime(at)) if at else "-"
    environment.filters["pretty"] = lambda value: json.dumps(
        value, indent=2, sort_keys=False, ensure_ascii=False
    )
    environment.filters["duration"] = _duration
    return environment


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {seconds}s" if minutes else f"{seconds}s"


def _json_script(value: Any) -> str:
    # Inside <script type="application/json">, "</" could close the element: escape it (still JSON).
    return json.dumps(value, ensure_ascii=False).replace("</", "<\\/")


class ConsolePages:
    """The request handlers, over one :class:`MeshView`."""

    def __init__(self, trace_url: str | None) -> None:
        self.csrf_token = ""
        self.trace_url = trace_url
        self.templates = _templates()
        self.view: MeshView | None = None

    def _view(self) -> MeshView:
        assert self.view is not None, "the console's mesh view opens with the application"
        return self.view

    def _render(self, name: str, request: Request, status: int = 200, **context: Any) -> HTMLResponse:
        view = self._view()
        page = self.templates.get_template(name).render(
            request=request,
            csrf_token=self.csrf_token,
            prefix=view.settings.prefix,
            catalog_error=view.catalog_error,
            active=name.removesuffix(".html"),
            **context,
        )
        return HTMLResponse(page, status_code=status)

    # ------------------------------------------------------------------ catalog

    async def catalog(self, request: Request) -> Response:
        started = time.perf_counter()
        view = self._view()
        snapshot = view.catalog
        params = request.query_params
        filters = {key: params.get(key, "").strip() for key in ("q", "plugin", "node", "tag")}
        chosen = snapshot.select(filters["q"], filters["plugin"], filters["node"], filters["tag"])
        pages = max(1, math.ceil(len(chosen) / PAGE_SIZE))
        try:
            page = min(max(1, int(params.get("page", "1"))), pages)
        except ValueError:
            page = 1
        shown = chosen[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
        # Hundreds of rows take milliseconds of CPU to render: off the event loop, so live streams flow.
        response = await anyio.to_thread.run_sync(
            lambda: self._render(
                "catalog.html",
                request,
                tools=shown,
                matching=len(chosen),
                total=len(snapshot.tools),
                node_count=len(snapshot.nodes),
                facets=snapshot.facets(),
                filters=filters,
                page=page,
                pages=pages,
            )
        )
        # The page's own server time, for browsers' developer tools and bench/console_catalog.py
        response.headers["server-timing"] = f"render;dur={(time.perf_counter() - started) * 1000:.2f}"
        return response

    # ------------------------------------------------------------------ one tool

    async def tool(self, request: Request) -> Response:
        view = self._view()
        name = request.path_params["name"]
        found = view.catalog.tools.get(name)
        if found is None:
            return self._render(
                "missing.html", request, status=404, what=f"no tool named {name!r} in the catalog"
            )
        spec = found.spec
        public = public_view(spec)
        ui_schema = (public.get("meta") or {}).get("ui_schema")
        return self._render(
            "tool.html",
            request,
            spec=spec,
            public=public,
            nodes=found.nodes,
            ui_schema=ui_schema,
            input_rows=schema_outline(spec.input_schema),
            output_rows=schema_outline(spec.output_schema),
            tool_json=_json_script({"spec": public, "ui_schema": ui_schema}),
        )

    async def start_call(self, request: Request) -> Response:
        view = self._view()
        name = request.path_params["name"]
        found = view.catalog.tools.get(name)
        if found is None:
            return JSONResponse({"error": f"no tool named {name!r} in the catalog"}, status_code=404)
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            return JSONResponse({"error": f"the request body is not JSON: {exc}"}, status_code=400)
        arguments = body.get("arguments") if isinstance(body, dict) else None
        if not isinstance(arguments, dict):
            return JSONResponse(
                {"error": 'send {"arguments": {...}}: arguments must be an object'}, status_code=400
            )
        # The page checks too; this stops a call the page could not check (a schema keyword it does not know).
        issues = redact_issues(found.spec, arguments, schema_issues(found.spec.input_schema, arguments))
        if issues:
            return JSONResponse(
                {"issues": [{"path": issue.path, "message": issue.message} for issue in issues]},
                status_code=422,
            )
        timeout = body.get("timeout")
        call = view.calls.start(
            found.spec, arguments, float(timeout) if isinstance(timeout, int | float) else None
        )
        return JSONResponse({"id": call.id}, status_code=202)

    async def call_state(self, request: Request) -> Response:
        view = self._view()
        call = view.calls.get(request.path_params["id"])
        if call is None:
            return JSONResponse(
                {"error": "no such call (or forgotten: the console keeps the latest ones)"}, status_code=404
            )
        return JSONResponse(call.as_dict())

    async def cancel_call(self, request: Request) -> Response:
        cancelled = self._view().calls.cancel(request.path_params["id"])
        return JSONResponse({"cancelled": cancelled}, status_code=200 if cancelled else 409)

    # ------------------------------------------------------------------ call detail

    async def call_detail(self, request: Request) -> Response:
        view = self._view()
        request_id = request.path_params["id"]
        timeline = view.feed.timeline(request_id)
        own = view.calls.get(request_id)
        if not timeline and own is None:
            return self._render(
                "missing.html",
                request,
                status=404,
                what=f"no events seen for call {request_id!r} (the console keeps the latest calls)",
            )
        started = timeline[0]["at"] if timeline and timeline[0]["at"] else (own.started_at if own else 0.0)
        steps = [
            {
                **step,
                "offset_ms": ((step["at"] or started) - started) * 1000.0,
                "attributes": public_meta(step["attributes"]),
            }
            for step in timeline
        ]
        trace_id = own.trace_id if own is not None else None
        parent = next(
            (
                str(step["attributes"].get("parent"))
                for step in timeline
                if step["kind"] == "started" and step["attributes"].get("parent")
            ),
            None,
        )
        trace_link = self.trace_url.replace("{trace_id}", trace_id) if self.trace_url and trace_id else None
        tool = timeline[0]["tool"] if timeline else own.tool if own else ""
        found = view.catalog.tools.get(tool)
        caches = None if found is None else bool(found.spec.cache is not None and found.spec.cache.enabled)
        own_result = msgspec.to_builtins(own.result) if own is not None and own.result is not None else None
        pipeline = [row.as_dict() for row in derive_steps(timeline, own_result, caches=caches)]
        # The derived steps sit where the pipeline ran: before the event that ended the call.
        pipeline_at = next((index for index, step in enumerate(steps) if step["kind"] in ENDS), len(steps))
        return self._render(
            "call.html",
            request,
            request_id=request_id,
            steps=steps,
            own=own.as_dict() if own else None,
            tool=tool,
            pipeline=pipeline,
            pipeline_at=pipeline_at,
            trace_id=trace_id,
            trace_link=trace_link,
            nested=view.feed.nested(request_id),
            parent=parent,
            own_json=_json_script(own.as_dict() if own else None),
        )

    # ------------------------------------------------------------------ live

    async def live(self, request: Request) -> Response:
        return self._render("live.html", request, interval=LIVE_BATCH_INTERVAL)

    async def live_stream(self, request: Request) -> Response:
        view = self._view()
        feed = view.feed

        async def batches() -> AsyncIterator[dict[str, str]]:
            position = feed.seq  # a new stream starts at now; the recent rows come in the first batch
            position = max(0, position - 100)
            while True:
                rows, skipped = feed.since(position, LIVE_BATCH_ROWS)
                if rows:
                    position = rows[-1].seq
                yield {
                    "event": "batch",
                    "data": json.dumps(
                        {
                            "rows": [row.as_dict() for row in rows],
                            "skipped": skipped,
                            "summary": feed.summary(),
                            "at": time.time(),
                        }
                    ),
                }
                await anyio.sleep(LIVE_BATCH_INTERVAL)

        return EventSourceResponse(batches(), ping=15, headers={"cache-control": "no-store"})

    # ------------------------------------------------------------------ nodes

    def _node_rows(self) -> list[dict[str, Any]]:
        view = self._view()
        now = time.time()
        rows = []
        for entry in view.catalog.nodes:
            age = now - entry.heartbeat_at if entry.heartbeat_at else None
            # Judged when the catalog was read: the page's own refresh delay is no fault of the node.
            late_by = view.catalog.read_at - entry.heartbeat_at if entry.heartbeat_at else 0.0
            if entry.draining:
                health = "draining"
            elif late_by > max(2 * entry.heartbeat, entry.heartbeat + 1.0):
                health = "late"
            else:
                health = "healthy"
            plugins = sorted({spec.source or "?" for spec in entry.tools})
            rows.append(
                {
                    "node": entry.node,
                    "host": entry.host,
                    "pid": entry.pid,
                    "version": entry.version,
                    "plugins": plugins,
                    "tools": len(entry.tools),
                    "in_flight": view.feed.in_flight_on(entry.node),
                    "uptime": now - entry.started_at if entry.started_at else None,
                    "health": health,
                    "heartbeat_age": age,
                }
            )
        return rows

    async def nodes(self, request: Request) -> Response:
        return self._render("nodes.html", request, rows=self._node_rows())

    async def nodes_table(self, request: Request) -> Response:
        page = self.templates.get_template("nodes_table.html").render(rows=self._node_rows())
        return HTMLResponse(page)


def create_app(
    settings: Settings,
    *,
    token: str | None = None,
    host: str = "127.0.0.1",
    trace_url: str | None = None,
    open_view: Callable[[Settings], Any] = open_mesh_view,
) -> ConsoleAccess:
    """The console as an ASGI application joined to the mesh of ``settings`` while it runs.

    ``token`` is required of every request when given; ``host`` is where it listens (a
    console without a token answers only requests addressed to a loopback name).
    ``trace_url`` (e.g. ``https://traces.example/trace/{trace_id}``) links a call to its trace.
    """
    pages = ConsolePages(trace_url)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with open_view(settings) as view:
            pages.view = view
            yield
            pages.view = None

    static = StaticFiles(directory=str(files(_PACKAGE).joinpath("static")))
    routes = [
        Route("/", pages.catalog, name="catalog"),
        Route("/tools/{name}", pages.tool, name="tool"),
        Route("/live", pages.live, name="live"),
        Route("/live/stream", pages.live_stream, name="live_stream"),
        Route("/nodes", pages.nodes, name="nodes"),
        Route("/nodes/table", pages.nodes_table, name="nodes_table"),
        Route("/calls/{id}", pages.call_detail, name="call"),
        Route("/api/tools/{name}/calls", pages.start_call, methods=["POST"]),
        Route("/api/calls/{id}", pages.call_state),
        Route("/api/calls/{id}/cancel", pages.cancel_call, methods=["POST"]),
        Mount("/static", app=static, name="static"),
    ]
    access = ConsoleAccess(Starlette(routes=routes, lifespan=lifespan), token=token, bind_host=host)
    pages.csrf_token = access.csrf_token
    return access
