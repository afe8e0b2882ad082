"""One error tree: every public exception is a ToolmeshError with a wire code; retryability follows the
code; NATS exceptions become toolmesh errors at one seam (``toolmesh._transport.nats_errors``), tried against a real
nats-server as well as unit by unit."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import ssl
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import anyio
import nats
import nats.errors
import pytest
import toolmesh
import toolmesh.plugins
from nats.aio.msg import Msg
from toolmesh import CallTimeout, ToolmeshError, ToolUnavailable, tool_error
from toolmesh._config import Settings
from toolmesh._errors import (
    BadRequest,
    BrokerError,
    DeadlineExceeded,
    NoResponders,
    PayloadTooLarge,
    PublishDenied,
    error_class,
)
from toolmesh._transport.callbacks import NatsCallbackChannel
from toolmesh._transport.mesh import connect_nats
from toolmesh._transport.nats_errors import denied_subject, nats_error, refuses_connection
from toolmesh.contracts import RETRYABLE_CODES, ErrorCode

from tests.nats_servers import NatsServer

RUNE_INTERNALS = "toolmesh.plugins.rune.lang."
"""The Rune interpreter's own modules may keep their own exceptions; its public error tree
(``lang.errors``) is checked like everything else."""


def _modules() -> Iterator[ModuleType]:
    for package in (toolmesh, toolmesh.plugins):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            name = info.name
            if name.startswith("toolmesh.contracts") or name.endswith("__main__"):
                continue  # the wire contracts keep msgspec's base classes; __main__ runs the CLI
            if name.startswith(RUNE_INTERNALS) and name != RUNE_INTERNALS + "errors":
                continue
            try:
                yield importlib.import_module(name)
            except ModuleNotFoundError as exc:  # an optional extra that is not installed (crewai)
                if exc.name is None or exc.name.startswith("toolmesh"):
                    raise


def _public_exceptions() -> list[type[Exception]]:
    found: dict[str, type[Exception]] = {}
    for module in _modules():
        for name, value in vars(module).items():
            # Exception subclasses only: BaseException-only classes are control flow that must pass
            # every `except Exception` (like CancelledError), e.g. the Rune host's NeedsThread.
            if (
                inspect.isclass(value)
                and issubclass(value, Exception)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found[f"{module.__name__}.{name}"] = value
    return [found[key] for key in sorted(found)]


PUBLIC_EXCEPTIONS = _public_exceptions()


def _instance(cls: type[Exception]) -> Exception:
    """An instance made with placeholder values for the constructor's required parameters."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except ValueError:  # no __init__ of its own: Exception's (message)
        return cls("a message")
    required = [
        parameter
        for parameter in parameters
        if parameter.default is inspect.Parameter.empty
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]

    def placeholder(parameter: inspect.Parameter) -> object:
        return 1 if parameter.annotation in (int, "int") else "x"

    positional = [placeholder(p) for p in required if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    keywords = {p.name: placeholder(p) for p in required if p.kind is inspect.Parameter.KEYWORD_ONLY}
    return cls(*positional, **keywords)


def test_the_walk_finds_the_known_trees() -> None:
    """The walk reaches the kernel's, the crew's, Rune's and the sandbox's exceptions."""
    names = {cls.__name__ for cls in PUBLIC_EXCEPTIONS}
    assert {"ToolmeshError", "DeadlineExceeded", "PublishDenied", "CrewError", "ScriptError"} <= names
    assert {"RuneError", "RuneBudgetExceeded", "WorkerCrashed"} <= names


@pytest.mark.parametrize("cls", PUBLIC_EXCEPTIONS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_public_exception_is_a_toolmesh_error_with_a_wire_code(cls: type[Exception]) -> None:
    assert issubclass(cls, ToolmeshError), (
        f"{cls.__module__}.{cls.__name__} does not derive from ToolmeshError"
    )
    error = _instance(cls)
    assert isinstance(error, ToolmeshError)
    assert isinstance(error.wire_code, ErrorCode)
    wire = error.to_tool_error()
    assert wire.code is error.wire_code and wire.message
    assert error.retryable is wire.retryable is (error.wire_code in RETRYABLE_CODES)


@pytest.mark.parametrize("code", list(ErrorCode), ids=lambda code: code.value)
def test_retryability_is_the_codes(code: ErrorCode) -> None:
    """The class of every code, its instances and ``tool_error`` agree with RETRYABLE_CODES."""
    cls = error_class(code)
    assert cls.code is code
    error = cls("failed") if code is not ErrorCode.UNKNOWN_TOOL else cls("missing")
    assert error.retryable is (code in RETRYABLE_CODES)
    assert error.to_tool_error().retryable is (code in RETRYABLE_CODES)
    assert tool_error(code, "failed").retryable is (code in RETRYABLE_CODES)


def test_no_module_decides_retryability_by_hand() -> None:
    """`retryable=` is set in one place (toolmesh._errors.tool_error), from RETRYABLE_CODES."""
    roots = [Path(toolmesh.__file__).parent, Path(toolmesh.plugins.__file__).parent]
    offenders = [
        f"{path}:{number}"
        for root in roots
        for path in root.rglob("*.py")
        if path.name != "errors.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "retryable=True" in line or "_RETRYABLE" in line
    ]
    assert offenders == []


# ------------------------------------------------------------------ the NATS seam, unit by unit


@pytest.mark.parametrize(
    ("exc", "expected", "code"),
    [
        (nats.errors.NoRespondersError(), NoResponders, ErrorCode.UNAVAILABLE),
        (nats.errors.TimeoutError(), CallTimeout, ErrorCode.TIMEOUT),
        (nats.errors.FlushTimeoutError(), CallTimeout, ErrorCode.TIMEOUT),
        (nats.errors.MaxPayloadError(), PayloadTooLarge, ErrorCode.TOO_LARGE),
        (nats.errors.BadSubjectError(), BadRequest, ErrorCode.BAD_REQUEST),
        (nats.errors.AuthorizationError(), BrokerError, ErrorCode.UNAVAILABLE),
        (nats.errors.ConnectionClosedError(), BrokerError, ErrorCode.UNAVAILABLE),
        (nats.errors.ConnectionReconnectingError(), BrokerError, ErrorCode.UNAVAILABLE),
        (nats.errors.StaleConnectionError(), BrokerError, ErrorCode.UNAVAILABLE),
        (nats.errors.NoServersError(), BrokerError, ErrorCode.UNAVAILABLE),
        (nats.errors.Error("nats: 'Authorization Violation'"), BrokerError, ErrorCode.UNAVAILABLE),
    ],
    ids=lambda value: (
        type(value).__name__ if isinstance(value, Exception) else getattr(value, "__name__", None)
    ),
)
def test_nats_errors_map_to_the_documented_classes(exc: Exception, expected: type, code: ErrorCode) -> None:
    error = nats_error(exc, "mesh.request.add", "the call of 'add'")
    assert type(error) is expected
    assert error.wire_code is code
    assert "'mesh.request.add'" in str(error) or expected in (PayloadTooLarge, BadRequest)


def test_a_refused_handshake_is_recognised_by_type_never_by_text() -> None:
    """nats.py reports the server's -ERR to CONNECT as the bare nats.errors.Error: any text."""
    assert refuses_connection(nats.errors.Error("nats: 'Authorization Violation'"))
    assert refuses_connection(nats.errors.Error("nats: 'some future wording'"))
    assert refuses_connection(nats.errors.AuthorizationError())
    assert refuses_connection(nats.errors.InvalidUserCredentialsError())
    assert refuses_connection(ssl.SSLCertVerificationError("certificate verify failed"))
    for transient in (
        ConnectionRefusedError("authorization violation"),  # the text alone proves nothing
        nats.errors.TimeoutError(),
        nats.errors.NoServersError(),
        nats.errors.UnexpectedEOF(),
    ):
        assert not refuses_connection(transient), transient


def test_only_a_permissions_violation_names_a_denied_subject() -> None:
    assert denied_subject(
        nats.errors.Error('nats: Permissions Violation for Publish to "m.request.add"')
    ) == ("m.request.add")
    assert denied_subject(nats.errors.Error("nats: 'Authorization Violation'")) is None
    assert denied_subject(ValueError('Permissions Violation for Publish to "x"')) is None


def test_publish_denied_and_deadline_exceeded_are_in_the_tree() -> None:
    denied = PublishDenied("m.request.admin")
    assert denied.to_tool_error().code is ErrorCode.REJECTED and "m.request.admin" in denied.message
    assert not denied.retryable
    late = DeadlineExceeded()
    assert late.wire_code is ErrorCode.TIMEOUT and late.retryable and str(late)


# ------------------------------------------------------------------ the seam against a real nats-server


@pytest.mark.anyio
async def test_callback_requests_fail_typed_on_real_nats(toolmesh_settings: Settings) -> None:
    """A callback nobody listens to is `unavailable`; one nobody answers is `timeout`; each keeps its cause."""
    nc = await nats.connect(toolmesh_settings.connect_url, connect_timeout=2, allow_reconnect=False)
    try:
        silent = await nc.subscribe("errors-test.silent")  # subscribed, never answers
        gone = NatsCallbackChannel(nc, "errors-test.nobody", "r1")
        with pytest.raises(NoResponders) as unanswered:
            await gone.ask("sampling", {}, timeout=5)
        assert isinstance(unanswered.value.__cause__, nats.errors.NoRespondersError)
        assert unanswered.value.to_tool_error().retryable
        slow = NatsCallbackChannel(nc, "errors-test.silent", "r2")
        with pytest.raises(CallTimeout) as late:
            await slow.ask("elicitation", {}, timeout=0.2)
        assert isinstance(late.value.__cause__, nats.errors.TimeoutError)
        assert "the elicitation request to the caller" in late.value.message

        # The connection still serves requests after both failures.
        async def respond(msg: Msg) -> None:
            await msg.respond(msg.data)

        echo = await nc.subscribe("errors-test.echo", cb=respond)
        assert (await nc.request("errors-test.echo", b"ok", timeout=5)).data == b"ok"
        await echo.unsubscribe()
        await silent.unsubscribe()
    finally:
        await nc.close()


@pytest.mark.anyio
async def test_wrong_credentials_are_refused_at_once_with_the_servers_error_as_cause() -> None:
    """A real server with token auth: a wrong token is a BrokerError at the first attempt, not after
    the reconnect attempts a lost connection gets; a right one connects."""
    with NatsServer('authorization { token: "right-token" }') as server:
        with anyio.fail_after(30):
            with pytest.raises(BrokerError, match="refused this connection") as refused:
                await connect_nats(
                    server.url, name="errors-test", token="wrong-token", max_reconnect_attempts=1000
                )
        assert type(refused.value.__cause__) is nats.errors.Error  # the server's -ERR, as nats.py reports it
        nc = await connect_nats(server.url, name="errors-test", token="right-token")
        try:
            assert nc.is_connected
        finally:
            await nc.close()


def test_unavailable_and_timeout_are_kinds_of_tool_errors() -> None:
    """Callers may catch the kernel's classes: the seam's errors are in the call-error tree."""
    assert issubclass(NoResponders, ToolUnavailable)
    assert issubclass(PublishDenied, toolmesh.CallRejected)
