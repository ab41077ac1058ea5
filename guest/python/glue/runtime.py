# runtime.py: the Python guest's runtime, the part of its glue written in
# Python (as guest/prelude.js is the QuickJS guest's). glue.c compiles it
# once, in ptcx_init, as the file <ptcx> (tracebacks leave out its frames),
# and calls start, resume, timer, next_program and restored from the
# exports of the guest ABI (docs/abi.md, "Python guest"). It reaches the host
# only through the built-in module _ptcx (module.c).
#
# A program is a module body with top-level await, run in __main__'s globals
# (which a session keeps from one program to the next), its result the value
# of a final expression statement, as in a REPL. It runs as a task of ptcx's
# own event loop (Loop): an asyncio loop without selectors or threads whose
# timers are the host's; every export runs the loop until nothing is ready,
# then returns pending (1), done (0) or error (2).

import _ptcx
import _random
from os import urandom
import asyncio
import collections.abc
import functools
import json
import linecache
import math
import random
import sys
import traceback
import types
from asyncio import base_events, events, format_helpers
from _thread import get_ident
from contextvars import copy_context

import __main__

PENDING, DONE, ERROR = 1, 0, 2
PROGRAM = "<program>"
RUNTIME = "<ptcx>"
MAX_TEXT = 10000
CO_COROUTINE = 0x80
MEMORY_MESSAGE = "out of memory: the program exceeded its memory limit"


class ToolCallError(Exception):
    """A tool call that failed: .tool is the tool, .code why (DENIED,
    TOOL_TIMEOUT, TOOL_FAILED, INVALID_ARGS, BUSY, ...), str(e) the
    message."""

    def __init__(self, message="", tool="", code="TOOL_FAILED"):
        super().__init__(message)
        self.tool = tool
        self.code = code


ToolCallError.__module__ = "ptcx"
Handle = _ptcx.Handle


# ---- logs ----


class Lines:
    """sys.stdout (level 0) or sys.stderr (level 4): one log line per line
    written; a line not ended is written when the program settles (or when
    it passes 64 KiB)."""

    encoding = "utf-8"
    errors = "replace"
    closed = False
    mute = False  # while ptcx_next closes the last program's tasks

    def __init__(self, level):
        self._level = level
        self._part = ""

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not " + type(s).__name__)
        if self.mute:
            return len(s)
        if "\n" not in s:
            self._part += s
            if len(self._part) > 65536:
                self.finish()
            return len(s)
        lines = (self._part + s).split("\n")
        self._part = lines.pop()
        for line in lines:
            _ptcx.log(self._level, line)
        return len(s)

    def writelines(self, lines):
        for s in lines:
            self.write(s)

    def flush(self):
        pass

    def finish(self):
        if self._part:
            part, self._part = self._part, ""
            _ptcx.log(self._level, part)

    def forget(self):
        self._part = ""

    def isatty(self):
        return False

    def writable(self):
        return True

    def readable(self):
        return False

    def fileno(self):
        raise OSError("the program's output has no file descriptor")


stdout, stderr = Lines(0), Lines(4)


# ---- the event loop ----


class Soon(events.Handle):
    """A handle of call_soon made without Handle.__init__'s checks (debug
    mode takes BaseEventLoop.call_soon)."""

    __slots__ = ()

    def __init__(self, callback, args, loop, context):
        self._context = context
        self._loop = loop
        self._callback = callback
        self._args = args
        self._cancelled = False
        self._repr = None
        self._source_traceback = None


class Loop(base_events.BaseEventLoop):
    """The program's event loop: ready callbacks run until there are none
    (step), timers are the host's (timer_set; ptcx_timer fires them). Its
    hot path is C (glue/loop.c): the instance's call_soon is _ptcx.call_soon,
    which comes back to the class's for what it does not do itself, and
    _ptcx.step runs the ready callbacks. The loop is running from its
    making on (a program's code only ever runs inside a step)."""

    def __init__(self):
        super().__init__()
        self._timers = {}  # host timer id -> TimerHandle
        self._timer_ids = {}  # id(TimerHandle) -> host timer id
        # get_debug in C (glue/loop.c): the C Future and Task ask it whenever
        # they are made (a call's future is one); set_debug keeps it true.
        _ptcx.set_debug(self._debug)
        self.get_debug = _ptcx.get_debug

    def set_debug(self, enabled):
        super().set_debug(enabled)
        _ptcx.set_debug(self._debug)

    def call_later(self, delay, callback, *args, context=None):
        if delay is None:
            raise TypeError("delay must not be None")
        return self._timer(self.time() + delay, delay, callback, args, context)

    def call_at(self, when, callback, *args, context=None):
        if when is None:
            raise TypeError("when cannot be None")
        return self._timer(when, when - self.time(), callback, args, context)

    def _timer(self, when, delay, callback, args, context):
        if closing:
            raise Closing()
        timer = events.TimerHandle(when, callback, args, self, context)
        tid = _ptcx.timer_set(0 if delay <= 0 else min(math.ceil(delay * 1000), 2**31 - 1))
        if tid <= 0:
            raise RuntimeError("too many timers pending (the limit is %s): await some first" % limits.get("maxTimers", "?"))
        timer._scheduled = True
        self._timers[tid] = timer
        self._timer_ids[id(timer)] = tid
        return timer

    def _timer_handle_cancelled(self, handle):
        tid = self._timer_ids.pop(id(handle), None)
        if tid is not None:
            self._timers.pop(tid, None)
            _ptcx.timer_clear(tid)

    def fire(self, tid):
        timer = self._timers.pop(tid, None)
        if timer is None:
            return
        del self._timer_ids[id(timer)]
        timer._scheduled = False
        if not timer._cancelled:
            self._ready.append(timer)

    def call_soon(self, callback, *args, context=None):
        # What _ptcx.call_soon, the instance's call_soon, leaves to Python: a
        # callback without a context, and debug mode (BaseEventLoop's, with
        # its checks and tracebacks). Without Handle.__init__'s checks
        # otherwise: the loop is never closed.
        if self._debug:
            return super().call_soon(callback, *args, context=context)
        handle = Soon(callback, args, self, copy_context() if context is None else context)
        self._ready.append(handle)
        return handle

    def _callback_failed(self, handle, callback, args, exc):
        # What Handle._run does with a callback's exception (_ptcx.step
        # calls it for a wakeup's).
        cb = format_helpers._format_callback_source(callback, args, debug=self.get_debug())
        context = {"message": "Exception in callback %s" % cb, "exception": exc, "handle": handle}
        if getattr(handle, "_source_traceback", None):
            context["source_traceback"] = handle._source_traceback
        self.call_exception_handler(context)

    def forget(self):
        self._ready.clear()
        self._timers.clear()
        self._timer_ids.clear()

    def _write_to_self(self):
        pass

    def _process_events(self, event_list):
        pass

    def run_forever(self):
        raise RuntimeError("the program runs on ptcx's event loop already: await instead")

    def run_until_complete(self, future):
        raise RuntimeError("the program runs on ptcx's event loop already: await instead")


loop = Loop()
events._set_running_loop(loop)
loop._thread_id = get_ident()  # what debug mode's _check_thread compares
# loop.create_future without its Python frame: the C Future, bound to loop.
create_future = functools.partial(asyncio.Future, loop=loop)


def asyncio_run(main, *, debug=None, loop_factory=None):
    """asyncio.run in a program: it cannot block, the program is on the loop
    already."""
    if asyncio.iscoroutine(main):
        main.close()
    raise RuntimeError("asyncio.run() cannot be used here: the program runs on ptcx's event loop already; "
                       "await the coroutine at the top level instead (await main())")


asyncio.run = asyncio.runners.run = asyncio_run


# ---- tools ----

calls = {}  # call id -> (future, tool name)
limits = {}
# closing is set while ptcx_next closes the last program's tasks: what they
# run then (finally blocks) reaches no import.
closing = False


class Closing(Exception):
    pass


def refusal(name, code):
    if code == -1:
        return ("too many nested calls pending at once (the limit is %s): await some of them before starting more"
                % limits.get("maxPendingCalls", "?"))
    if code == -2:
        return "this program reached its limit of %s nested calls" % limits.get("maxCalls", "?")
    return "the host refused the call (code %d)" % code


async def read_handle(h, as_):
    if closing:
        raise Closing()
    cid = _ptcx.read_handle(h, as_)
    if cid <= 0:
        raise ToolCallError(refusal("$handle", cid), "$handle", "BUSY" if cid == -1 else "DENIED")
    fut = loop.create_future()
    calls[cid] = (fut, "$handle")
    return await fut


_ptcx.set_reader(read_handle)


def refused(name, code):
    """The exception of a call the host refused (code < 0)."""
    return ToolCallError(refusal(name, code), name, "BUSY" if code == -1 else "DENIED")


# A tool's function is C (glue/tool.c): calling it gives a call, which
# makes the nested call when first awaited (or sent to, by a task) and then
# waits on its future; asyncio takes it for a coroutine.
make_tool = _ptcx.make_tool
_ptcx.tools_init(asyncio.Future, calls, refused, globals())
collections.abc.Coroutine.register(_ptcx.Call)


class Namespace:
    """tools.prefix: the tools named prefix.<name>, their functions made on
    first use."""

    def __init__(self, path, tree, tool):
        object.__setattr__(self, "_Namespace__path", path)
        object.__setattr__(self, "_Namespace__tree", tree)  # segment -> full name, or a subtree
        object.__setattr__(self, "_Namespace__tool", tool)

    def __getattr__(self, key):
        entry = self.__tree.get(key) if not key.startswith("_Namespace__") else None
        if entry is None:
            if key.startswith("__"):
                raise AttributeError(key)
            raise AttributeError("tools.%s.%s is not a bound tool; %s" % (self.__path, key, bound_list()))
        v = self.__tool(entry) if isinstance(entry, str) else Namespace(self.__path + "." + key, entry, self.__tool)
        self.__dict__[key] = v
        return v

    def __setattr__(self, key, value):
        raise AttributeError("tools is read-only")

    def __delattr__(self, key):
        raise AttributeError("tools is read-only")

    def __dir__(self):
        return sorted(self.__tree)

    def __repr__(self):
        return "<tools.%s: %s>" % (self.__path, ", ".join(sorted(self.__tree)))


class Tools:
    """The program's tools: await tools.read(path="a.txt"), or
    tools.read({"path": "a.txt"}); tools["odd-name"](...) for a name that is
    not an identifier; tools.prefix.x for a tool named prefix.x. A tool's
    function is made on first use (a large tool set costs a run little)."""

    def __init__(self, names):
        # The object's own state, under names no tool can shadow (a tool
        # named so is reached with brackets only).
        names = tuple(names)
        bound = frozenset(names)
        object.__setattr__(self, "_Tools__names", names)
        object.__setattr__(self, "_Tools__bound", bound)
        object.__setattr__(self, "_Tools__by_name", {})
        # Namespaces: dotted names whose segments are identifiers and whose
        # first segment is no tool; where a name is both a tool and a
        # prefix, the tool wins (the longer name: brackets only).
        heads = {}
        for n in names:
            if "." in n:
                parts = n.split(".")
                if parts[0] in bound or not all(p.isidentifier() for p in parts):
                    continue
                node = heads
                for p in parts[:-1]:
                    node = node.setdefault(p, {})
                    if isinstance(node, str):
                        break
                else:
                    node[parts[-1]] = n
        object.__setattr__(self, "_Tools__heads", heads)

    def _Tools__tool(self, name):
        f = self.__by_name.get(name)
        if f is None:
            f = self.__by_name[name] = make_tool(name)
        return f

    def __getattr__(self, key):
        if key in self.__bound and key.isidentifier() and not key.startswith("_Tools__"):
            v = self.__tool(key)
        elif key in self.__heads:
            v = Namespace(key, self.__heads[key], self.__tool)
        elif key.startswith("__"):
            raise AttributeError(key)
        elif key == "run_code":
            raise AttributeError("tools.run_code is not available: run_code cannot be called from inside a program")
        else:
            raise AttributeError("tools.%s is not a bound tool; %s" % (key, bound_list()))
        self.__dict__[key] = v
        return v

    def __getitem__(self, key):
        if isinstance(key, str) and key in self.__bound:
            return self.__tool(key)
        if key in ("$search", "$describe"):
            if catalog is None:
                raise AttributeError('tools["%s"] is not available: every bound tool is declared in the prompt '
                                     "(a catalog comes only with a large tool set)" % key)
            return catalog.search if key == "$search" else catalog.describe
        raise AttributeError("tools[%r] is not a bound tool; %s" % (key, bound_list()))

    def __contains__(self, key):
        return key in self.__bound

    def __setattr__(self, key, value):
        raise AttributeError("tools is read-only")

    def __delattr__(self, key):
        raise AttributeError("tools is read-only")

    def __dir__(self):
        return sorted(self.__bound)

    def __repr__(self):
        return "<tools: %s>" % ", ".join(self.__names)


bound_names = ()
SEARCH_LIMIT, SEARCH_MAX = 10, 50


def words(s):
    """The distinct lower-case words of s: runs of ASCII letters and digits."""
    out, w = set(), []
    for ch in s.lower() + " ":
        if "a" <= ch <= "z" or "0" <= ch <= "9":
            w.append(ch)
        elif w:
            out.add("".join(w))
            w = []
    return out


class Catalog:
    """tools["$search"] and tools["$describe"] of a large tool set, answered
    from the config's catalog (docs/abi.md), parsed on first use."""

    def __init__(self, text):
        self._text = text
        self._entries = None

    def _load(self):
        if self._entries is None:
            entries = json.loads(self._text)
            self._by_name = {e["name"]: e for e in entries}
            self._index = [(e["name"].lower(), words(e["name"]), (e["summary"] + " " + e["description"]).lower(),
                            words(e["summary"] + " " + e["description"])) for e in entries]
            self._entries = entries

    def search(self, query, limit=SEARCH_LIMIT):
        if not isinstance(query, str):
            raise TypeError('tools["$search"](query, limit=10): query must be a str, such as "read a file"')
        try:
            n = math.floor(limit)
        except (TypeError, ValueError, OverflowError):
            n = 0
        if n < 1:
            raise ValueError('tools["$search"](query, limit=10): limit must be a number from 1 to %d' % SEARCH_MAX)
        n = min(n, SEARCH_MAX)
        self._load()
        q, terms = query.lower().strip(), words(query)
        hits = []
        for (name, name_words, text, text_words), e in zip(self._index, self._entries):
            score = 100 if name == q else 0
            for t in terms:
                score += 10 if t in name_words else 5 if t in name else 0
                score += 3 if t in text_words else 1 if t in text else 0
            if score > 0:
                hits.append((-score, e["name"], e))
        hits.sort(key=lambda h: (h[0], h[1]))
        return [{"name": e["name"], "description": e["summary"]} for _, _, e in hits[:n]]

    def describe(self, name):
        self._load()
        e = self._by_name.get(str(name))
        if e is None:
            raise AttributeError('tools["$describe"](%r): no bound tool has that name; find one with tools["$search"]("what it does")'
                                 % str(name))
        return {k: e.get(k) for k in ("name", "description", "declaration", "inputSchema", "outputSchema")}


catalog = None


def bound_list():
    if catalog is not None:
        return 'find the right name with tools["$search"]("what it does")'
    if not bound_names:
        return "no tools are bound to this program"
    names = ", ".join(bound_names[:20])
    if len(bound_names) > 20:
        names += ", and %d more" % (len(bound_names) - 20)
    return "the bound tools are: " + names


# The module a program imports: from ptcx import ToolCallError, Handle.
ptcx_module = types.ModuleType("ptcx", "ptcx: the program's tools, ToolCallError and Handle.")
ptcx_module.ToolCallError = ToolCallError
ptcx_module.Handle = Handle
sys.modules["ptcx"] = ptcx_module


# ---- running a program ----

NO_RESULT = object()
main = None  # the program's task
reseeded = False


RESULT = "<result>"  # the global the final expression statement assigns (compile.c)


async def run_program(code, has_result, g):
    r = eval(code, g)
    if code.co_flags & CO_COROUTINE:
        await r
    if not has_result:
        return NO_RESULT
    return g.pop(RESULT, None)


def compile_program(source):
    """The program's code, compiled with top-level await, and whether its
    last statement is an expression statement, whose value the code assigns
    to RESULT. In C (compile.c): without the AST's Python objects."""
    return _ptcx.compile_program(source, PROGRAM)


last_tools = None  # the last program's Tools (tools_of)


def tools_of(names):
    """The program's tools: those of the session's last program when its
    tool names are the same (its functions made already), else new ones."""
    global last_tools, bound_names
    if last_tools is None or bound_names != names:
        _ptcx.bind(names)
        bound_names = names
        last_tools = Tools(names)
    return last_tools


def start(config):
    global main, reseeded
    if not reseeded:
        reseed()
    reseeded = False
    c = parse(config)
    limits.clear()
    for k in ("maxPendingCalls", "maxCalls", "maxTimers"):
        if k in c:
            limits[k] = c[k]
    sys.stdout, sys.stderr = stdout, stderr
    memory_limit = c.get("memoryLimit")
    _ptcx.set_memory_limit(memory_limit if isinstance(memory_limit, int) and memory_limit > 0 else 0)
    if c.get("lexicalTools"):
        return fail("exception", "a plan-bound run is not supported for Python programs")
    global catalog
    text = c.get("catalog")
    catalog = Catalog(text) if isinstance(text, str) and text else None
    names = tuple(str(n) for n in c.get("tools") or ())
    tools = tools_of(names)
    ptcx_module.tools = tools
    g = __main__.__dict__
    g["tools"] = tools
    g["ToolCallError"] = ToolCallError
    source = c.get("code", "")
    if not isinstance(source, str):
        return fail("exception", "the config's code is not text")
    linecache.cache[PROGRAM] = (len(source), None, source.splitlines(True), PROGRAM)
    try:
        code, has_result = compile_program(source)
    except SyntaxError as e:
        return fail_syntax(e)
    except (ValueError, MemoryError, RecursionError) as e:
        # Null bytes in the source (ValueError), or a program too large or
        # too deeply nested to compile.
        return report(e)
    if code.co_flags & CO_COROUTINE:
        main = loop.create_task(run_program(code, has_result, g))
        return run()
    # Without top-level await the module runs now, in a context of its own
    # (as its task's would); main is its outcome, a future done already (no
    # task, no coroutine, no step for it), and the loop then runs what it
    # scheduled, as the task's step would have next.
    main = create_future()
    try:
        copy_context().run(eval, code, g)
    except (SystemExit, KeyboardInterrupt) as e:
        main.set_exception(e)
        return settle()  # at once, as they end the task's step
    except StopIteration as e:
        main.set_exception(RuntimeError("coroutine raised StopIteration"))  # what its task's coroutine raises
        main.exception().__cause__ = e
    except BaseException as e:
        main.set_exception(e)
    else:
        main.set_result(g.pop(RESULT, None) if has_result else NO_RESULT)
    return run()


def run():
    """Steps the loop and settles the program when its task is done (as
    ptcx_run_loop does in C, glue/loop.c)."""
    try:
        _ptcx.step()
    except BaseException as e:
        return step_failed(e)
    if main is None or not main.done():
        return PENDING
    return settle()


def step_failed(e):
    # SystemExit (sys.exit) and KeyboardInterrupt pass through asyncio's
    # tasks and handles: they end the program.
    if main is None or not main.done():
        stdout.finish()
        stderr.finish()
        _ptcx.set_memory_limit(0)
        return report(e)
    return settle()


def settle():
    stdout.finish()
    stderr.finish()
    _ptcx.set_memory_limit(0)
    if main.cancelled():
        return fail("exception", "CancelledError: the program's task was cancelled")
    e = main.exception()
    if e is not None:
        return report(e)
    v = main.result()
    if v is NO_RESULT:
        _ptcx.no_result()
        return DONE
    try:
        _ptcx.result(v)
    except TypeError as e:
        return fail("invalid-output", "the program's result is not JSON: %s" % e)
    except RecursionError:
        return fail("invalid-output", "the program's result is not JSON: it nests too deeply")
    return DONE


def resume(cid, ok, payload):
    # What ptcx_resume's fast path (glue/loop.c) leaves: a failure, a
    # handle, an empty or not compact answer, a call no longer waited on.
    entry = calls.pop(cid, None)
    if entry is not None:
        fut, name = entry
        if not fut.done():
            if ok == 0:
                msg = payload.decode("utf-8", "replace")
                at = msg.rfind("\0")
                if at < 0:
                    fut.set_exception(ToolCallError(msg, name))
                else:
                    fut.set_exception(ToolCallError(msg[:at], name, msg[at + 1:]))
            else:
                try:
                    v = parse(payload) if payload else None
                    if ok == 2:
                        v = make_handle(v)
                except ValueError:
                    fut.set_exception(ToolCallError("the tool returned a value that is not valid JSON"
                                                    if ok != 2 else "the host's handle is malformed", name))
                else:
                    fut.set_result(v)
    if main is None:
        return PENDING
    return run()


scan_once = json.decoder.JSONDecoder().scan_once  # the C scanner


def parse(payload):
    """json.loads of a result's bytes, by the C scanner alone when the JSON
    fills them (the host's is compact), else by json.loads."""
    s = payload.decode("utf-8")
    try:
        v, end = scan_once(s, 0)
    except StopIteration:
        end = -1
    if end != len(s):
        return json.loads(s)
    return v


def make_handle(env):
    def own(d, k):
        return d.get(k) if isinstance(d, dict) else None

    labels = own(env, "labels")
    size = own(env, "size")
    return _ptcx.make_handle(
        str(own(env, "ref") or ""),
        size if isinstance(size, int) and not isinstance(size, bool) else 0,
        str(own(labels, "integrity") or ""),
        str(own(labels, "confidentiality") or ""),
        str(own(env, "tool") or ""),
    )


# The loop's hot path in C (glue/loop.c): its call_soon, the step, and
# ptcx_resume's common case (a compact JSON value for a waiting call, then
# what run() does).
_ptcx.loop_init(loop._ready, Loop.call_soon.__get__(loop), loop._callback_failed, calls, scan_once, globals(),
                settle, step_failed, asyncio.InvalidStateError)
loop.call_soon = _ptcx.call_soon


def timer(tid):
    loop.fire(tid)
    if main is None:
        return PENDING
    return run()


def next_program():
    """Readies a session's globals for its next program: the last one's
    tasks (its own and those it made) are closed without output, its calls,
    timers and unfinished output lines forgotten."""
    global main, closing
    loop.forget()
    stdout.mute = stderr.mute = closing = True
    try:
        # asyncio.all_tasks(loop), without its WeakSet's generator: the
        # tasks scheduled (weak references) and the eager ones.
        for t in [r() for r in tuple(scheduled_tasks.data)] + list(eager_tasks):
            if t is None or t.done():
                continue
            t._log_destroy_pending = False
            try:
                t.get_coro().close()
            except BaseException:
                pass
    finally:
        stdout.mute = stderr.mute = closing = False
    main = None
    loop.forget()
    calls.clear()
    stdout.forget()
    stderr.forget()
    restored()


def restored():
    """Reseeds random from the host's random source (WASI random_get). The
    string hash secret was fixed when the image was made and stays."""
    global reseeded
    reseed()
    reseeded = True


def reseed():
    # random.seed() from 32 bytes of the host's random source: its C part,
    # without the Python wrapper (whose other work is to forget gauss's spare
    # value), and with 256 bits rather than the 2,496 bytes a seed of None
    # reads (each one the host's to make, on every program of a session).
    seed_random(random._inst, int.from_bytes(urandom(32)))
    random._inst.gauss_next = None


seed_random = _random.Random.seed
scheduled_tasks, eager_tasks = asyncio.tasks._scheduled_tasks, asyncio.tasks._eager_tasks


# ---- failures ----


def fail(kind, message, **extra):
    message = message or kind
    if len(message) > MAX_TEXT:
        message = message[: MAX_TEXT - 3] + "..."
    d = {"kind": kind, "message": message}
    d.update(extra)
    _ptcx.error(json.dumps(d, ensure_ascii=False))
    return ERROR


def fail_syntax(e):
    extra = {}
    if e.filename == PROGRAM and isinstance(e.lineno, int) and e.lineno > 0:
        extra["line"] = e.lineno
        if isinstance(e.offset, int) and e.offset > 0:
            extra["column"] = e.offset
    return fail("syntax", "%s: %s" % (type(e).__name__, e.msg), **extra)


def describe(e):
    t = type(e)
    name = t.__qualname__
    if t.__module__ not in ("builtins", "__main__", "ptcx"):
        name = t.__module__ + "." + name
    try:
        text = str(e)
    except Exception:
        text = "<unprintable %s>" % name
    s = name + ": " + text if text else name
    if isinstance(e, BaseExceptionGroup):
        subs = "; ".join(describe(x) for x in e.exceptions[:10])
        s += " [" + subs + ("; ..." if len(e.exceptions) > 10 else "") + "]"
    return s


def stack_of(e):
    tb = traceback.TracebackException(type(e), e, e.__traceback__, limit=50, capture_locals=False)
    # Without the runtime's frames, and without the event loop's before the
    # program's first (a task's step, a handle's run).
    frames = [f for f in tb.stack if f.filename != RUNTIME]
    while frames and frames[0].filename != PROGRAM:
        frames.pop(0)
    frames = traceback.StackSummary.from_list(frames)
    if not frames:
        return None
    s = "Traceback (most recent call last):\n" + "".join(frames.format())
    if len(s) > MAX_TEXT:
        s = s[: MAX_TEXT - 3] + "..."
    return s


def report(e):
    if isinstance(e, MemoryError):
        return fail("memory", MEMORY_MESSAGE)
    if isinstance(e, SyntaxError) and e.filename == PROGRAM and main is None:
        return fail_syntax(e)
    try:
        message = describe(e)
        stack = stack_of(e)
    except MemoryError:
        return fail("memory", MEMORY_MESSAGE)
    except Exception as x:
        message, stack = "%s (describing it failed: %s)" % (type(e).__name__, type(x).__name__), None
    if stack:
        return fail("exception", message, stack=stack)
    return fail("exception", message)


# What the image holds: the modules programs use most, imported once.
import collections  # noqa: E402,F401
import dataclasses  # noqa: E402,F401
import datetime  # noqa: E402,F401
import itertools  # noqa: E402,F401
import re  # noqa: E402,F401
import typing  # noqa: E402,F401
