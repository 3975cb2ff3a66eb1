"""The interface compiler: idl/<name>.toml -> C client proxy, server skeleton, header.

A service interface is described once (one file per interface under idl/).
From it this module writes, into build/gen/services/:

  <name>_if.h       method numbers, the service's table of handlers
                    (struct <name>_ops), the skeleton's and proxies' prototypes
  <name>_server.c   the skeleton: checks a request's method and length,
                    unpacks the arguments, calls the handler, packs the reply
  <name>_client.c   the proxies: one C function per method, over ipc_call

Neither side knows where the service runs: the skeleton talks to the
service environment (services/include/svc.h), which has one implementation
inside the kernel and one in user space; the proxies make an ordinary IPC
call, which the kernel routes to either.

Wire format: label = interface id << 16 | method number (1-based). A
request carries the in-arguments in order, a reply MR0 = status (0 or a
negated error) and then the out-arguments. u32/u64/i64 take one message
register each; `bytes` (with a `max` of at most 200) takes one register for
its length and max/8 rounded up for its data; `buffer` (in-arguments only)
passes the address and length of a client buffer, which the service reads
or fills with svc_copy_in / svc_copy_out (large data, no size limit here). Every generated file says it
is generated in its first line.

Register-only methods: a method whose arguments and results are all scalars
and fit in MR0..MR5 (the registers x2..x7) both ways, and that is not marked
`long = true` (it may take long: a kernel-placed instance must serve it as a
preemptible request on its own stack), gets a proxy that is one
inline `svc` with its arguments in x2.. (no array, no generic transport) and
a register entry <name>_fast_<method>, picked by <name>_fast: the kernel
hands it a call on a kernel-placed service straight from the caller's saved
registers and it answers into them; the kernel's table (ksvc_table.c) also
gets a light entry per such method, which a thread's repeated request runs
straight from the exception vector. Anything it does not recognise exactly goes to the
skeleton (<name>_dispatch), which answers it as before, errors included.
"""
import argparse
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from petrel.syscallgen import write_if_changed

SCALARS = {"u32": "uint32_t", "u64": "uint64_t", "i64": "int64_t"}
MAX_MRS = 32
REG_MRS = 6         # MR0..MR5 travel in x2..x7
MAX_HANDLES = 3
MAX_BYTES = 200
METHOD_KEYS = {"name", "doc", "in", "out", "errors", "long"}
ERRORS = {"E_INVAL", "E_FAULT", "E_NOMEM", "E_NOENT", "E_RANGE", "E_BUSY", "E_PERM", "E_AGAIN",
          "E_CLOSED", "E_STATE", "E_TIMEOUT", "E_BADHANDLE", "E_LIMIT", "E_IO"}


# Names the generated code uses beside the arguments (and x0, x1, ...: the
# registers of a register-only proxy).
RESERVED = {"call", "status", "reply", "mr", "ep", "err", "token", "ops", "got", "handles", "objs", "rights", "i", "x"}


class IdlError(ValueError):
    """An interface description is malformed."""


RIGHTS = {"read": "R_READ", "write": "R_WRITE", "exec": "R_EXEC", "grant": "R_GRANT", "dup": "R_DUP",
          "manage": "R_MANAGE"}


@dataclass
class Arg:
    name: str
    type: str
    max: int = 0
    rights: tuple = ()      # an out handle: the rights the client gets

    def mrs(self) -> int:
        if self.type == "handle":
            return 0
        if self.type == "buffer":
            return 2
        return 1 if self.type in SCALARS else 1 + (self.max + 7) // 8


@dataclass
class Method:
    number: int
    name: str
    doc: str
    ins: list = field(default_factory=list)
    outs: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    long: bool = False      # may take long: never on a register path (`long = true`)

    def request_mrs(self) -> int:
        return sum(a.mrs() for a in self.ins)

    def request_handles(self) -> int:
        return sum(1 for a in self.ins if a.type == "handle")

    def reply_mrs(self) -> int:
        return 1 + sum(a.mrs() for a in self.outs)

    def reply_handles(self) -> list:
        return [a for a in self.outs if a.type == "handle"]

    def register_only(self) -> bool:
        """Every argument and result a scalar, the request and the reply
        (with its status) in MR0..MR5, and not `long`: served from registers
        alone, in the caller's kernel entry with interrupts masked."""
        return (not self.long and all(a.type in SCALARS for a in self.ins + self.outs)
                and self.request_mrs() <= REG_MRS and self.reply_mrs() <= REG_MRS)


@dataclass
class Interface:
    name: str
    id: int
    doc: str
    methods: list
    own_entry: bool = False     # the service writes <name>_service itself (entry = "service")
    fault_fast: bool = False    # the service writes <name>_fault_fast, its register entry for faults
    fault_shared: bool = False  # ... and <name>_fault_shared, the part of it several cores may run at once
    objects: bool = False       # objects programs serve (native object RPC), not a placeable service

    def register_methods(self) -> list:
        """The methods served from registers alone (Method.register_only)."""
        return [m for m in self.methods if m.register_only()]


def _args(where: str, raw, direction: str) -> list:
    if not isinstance(raw, list):
        raise IdlError(f"{where}: '{direction}' must be a list of {{ name, type }} tables")
    out, seen = [], set()
    for a in raw:
        if not isinstance(a, dict) or set(a) - {"name", "type", "max", "rights"}:
            raise IdlError(f"{where}: bad argument {a!r}")
        if "rights" in a and (direction != "out" or a.get("type") != "handle"):
            raise IdlError(f"{where}: argument {a.get('name')!r}: 'rights' is only for out handles")
        name, typ = a.get("name"), a.get("type")
        if not isinstance(name, str) or not name.isidentifier() or name in seen:
            raise IdlError(f"{where}: argument name {name!r} is not an identifier or is repeated")
        if name in RESERVED or re.fullmatch(r"x[0-9]+", name):
            raise IdlError(f"{where}: argument name {name!r} is reserved (the generated code's own)")
        seen.add(name)
        if typ in SCALARS:
            if "max" in a:
                raise IdlError(f"{where}: argument {name!r}: 'max' is only for bytes")
            out.append(Arg(name, typ))
        elif typ == "handle":
            if "max" in a:
                raise IdlError(f"{where}: argument {name!r}: a handle takes no 'max'")
            rights = a.get("rights", ["read", "write"]) if direction == "out" else []
            if direction == "out" and (not isinstance(rights, list) or not rights or
                                       any(r not in RIGHTS for r in rights)):
                raise IdlError(f"{where}: argument {name!r}: 'rights' must be a list of {', '.join(RIGHTS)}")
            out.append(Arg(name, typ, 0, tuple(rights)))
        elif typ == "buffer":
            if direction != "in" or "max" in a:
                raise IdlError(f"{where}: argument {name!r}: a buffer is an in-argument without 'max'")
            out.append(Arg(name, typ))
        elif typ == "bytes":
            size = a.get("max")
            if not isinstance(size, int) or not 1 <= size <= MAX_BYTES:
                raise IdlError(f"{where}: argument {name!r}: bytes need a 'max' from 1 to {MAX_BYTES}")
            out.append(Arg(name, typ, size))
        else:
            raise IdlError(f"{where}: argument {name!r}: unknown type {typ!r} "
                           f"(u32, u64, i64, bytes, buffer, handle)")
    return out


# Reads and checks one interface file.
def load(path: Path) -> Interface:
    try:
        doc = tomllib.loads(Path(path).read_text())
    except tomllib.TOMLDecodeError as e:
        raise IdlError(f"{path}: {e}") from None
    head = doc.get("interface")
    if not isinstance(head, dict) or set(doc) - {"interface", "method"}:
        raise IdlError(f"{path}: needs an [interface] table and [[method]] tables only")
    name, ident = head.get("name"), head.get("id")
    if not isinstance(name, str) or not name.isidentifier() or name != Path(path).stem:
        raise IdlError(f"{path}: [interface] name must be an identifier equal to the file name")
    if not isinstance(ident, int) or not 1 <= ident <= 0x7fff:
        raise IdlError(f"{path}: [interface] id must be 1..32767")
    keys = {"name", "id", "doc", "entry", "fault_fast", "fault_shared", "objects"}
    if set(head) - keys:
        raise IdlError(f"{path}: [interface] has unknown keys {sorted(set(head) - keys)}")
    for flag in ("fault_fast", "fault_shared", "objects"):
        if not isinstance(head.get(flag, False), bool):
            raise IdlError(f"{path}: [interface] {flag} must be true or false")
    if head.get("fault_shared") and not head.get("fault_fast"):
        raise IdlError(f"{path}: [interface] fault_shared needs fault_fast (its shared part)")
    entry = head.get("entry", "generated")
    if entry not in ("generated", "service"):
        raise IdlError(f"{path}: [interface] entry must be \"generated\" (the skeleton is the service's entry) "
                       f"or \"service\" (the service defines <name>_service and calls <name>_dispatch)")
    methods, names = [], set()
    for i, m in enumerate(doc.get("method", [])):
        where = f"{path}: method #{i + 1} ({m.get('name', '?')})"
        if set(m) - METHOD_KEYS:
            raise IdlError(f"{where}: unknown keys {sorted(set(m) - METHOD_KEYS)}")
        mname = m.get("name")
        if not isinstance(mname, str) or not mname.isidentifier() or mname in names:
            raise IdlError(f"{where}: bad or duplicate method name")
        names.add(mname)
        errors = m.get("errors", [])
        if not isinstance(errors, list) or any(e not in ERRORS for e in errors):
            raise IdlError(f"{where}: errors must be a list of {', '.join(sorted(ERRORS))}")
        if not isinstance(m.get("long", False), bool):
            raise IdlError(f"{where}: long must be true or false")
        method = Method(i + 1, mname, m.get("doc", ""), _args(where, m.get("in", []), "in"),
                        _args(where, m.get("out", []), "out"), errors, m.get("long", False))
        both = {a.name for a in method.ins} & {a.name for a in method.outs}
        if both:
            raise IdlError(f"{where}: {sorted(both)[0]!r} names an argument both in and out (the C functions "
                           f"take both)")
        if method.request_mrs() > MAX_MRS or method.reply_mrs() > MAX_MRS:
            raise IdlError(f"{where}: needs more than {MAX_MRS} message registers")
        if method.request_handles() > 3 or len(method.reply_handles()) > 3:
            raise IdlError(f"{where}: at most 3 handle arguments each way")
        methods.append(method)
    if not methods:
        raise IdlError(f"{path}: no [[method]]")
    return Interface(name, ident, head.get("doc", ""), methods, entry == "service", head.get("fault_fast", False),
                     head.get("fault_shared", False), head.get("objects", False))


HEADER = "/* Generated by tools/petrel/idlc.py from idl/{name}.toml: do not edit. */\n"


# How each side spells a method's arguments: the first parameter, then a
# handle, a caller's buffer, input bytes and output bytes ("{}" is the name).
_HANDLER_SPELLING = ("struct svc_call *call", "svc_handle {}", "uint64_t {}", "const uint8_t *{}", "uint8_t *{}",
                     "svc_handle *{}")
_PROXY_SPELLING = ("uint32_t ep", "uint32_t {}", "void *{}", "const void *{}", "void *{}", "uint32_t *{}")


def _params(m: Method, spelling: tuple) -> str:
    first, handle, buffer, in_bytes, out_bytes, out_handle = spelling
    params = [first]
    for a in m.ins:
        if a.type == "handle":
            params += [handle.format(a.name)]
        elif a.type == "buffer":
            params += [buffer.format(a.name), f"uint64_t {a.name}_len"]
        elif a.type in SCALARS:
            params += [f"{SCALARS[a.type]} {a.name}"]
        else:
            params += [in_bytes.format(a.name), f"uint32_t {a.name}_len"]
    for a in m.outs:
        if a.type == "handle":
            params += [out_handle.format(a.name)]
        elif a.type in SCALARS:
            params += [f"{SCALARS[a.type]} *{a.name}"]
        else:
            params += [out_bytes.format(a.name), f"uint32_t *{a.name}_len"]
    return ", ".join(params)


def _handler_params(m: Method) -> str:
    return _params(m, _HANDLER_SPELLING)


def _proxy_params(m: Method) -> str:
    return _params(m, _PROXY_SPELLING)


def _later_params(m: Method) -> str:
    params = ["svc_token token", "int64_t status"]
    for a in m.outs:
        if a.type == "handle":
            params += [f"svc_handle {a.name}"]
        elif a.type in SCALARS:
            params += [f"{SCALARS[a.type]} {a.name}"]
        else:
            params += [f"const uint8_t *{a.name}", f"uint32_t {a.name}_len"]
    return ", ".join(params)


# The reply of a method: plain, or with the objects it hands out (given
# away to the client; on an error status the service's are released).
def _reply_call(m: Method, plain: str, objects: str, dest: str, label: str) -> list:
    hs = m.reply_handles()
    if not hs:
        return [f"    {plain}({dest}, {label}, {_reply_len(m)}, mr);\n"]
    rights = ", ".join(" | ".join(RIGHTS[r] for r in a.rights) for a in hs)
    return [f"    svc_handle objs[{len(hs)}] = {{ {', '.join(a.name for a in hs)} }};\n",
            f"    uint32_t rights[{len(hs)}] = {{ {rights} }};\n",
            f"    for (unsigned i = 0; status != 0 && i < {len(hs)}; i++) {{\n"
            f"        if (objs[i])\n            svc_handle_release(objs[i]);\n        objs[i] = 0;\n    }}\n",
            f"    {objects}({dest}, {label}, {_reply_len(m)}, mr, {len(hs)}, objs, rights);\n"]


def header(itf: Interface) -> str:
    up = itf.name.upper()
    out = [HEADER.format(name=itf.name), f"#ifndef PETREL_{up}_IF_H\n#define PETREL_{up}_IF_H\n\n",
           '#include <stdint.h>\n#include "svc.h"\n\n', f"/* {itf.doc} */\n#define {up}_IF_ID {itf.id}\n\n"]
    for m in itf.methods:
        out.append(f"#define {up}_{m.name.upper()} {m.number}\n")
    out.append(f"\n/* The service's handlers: return 0 (reply with the outs), a negated\n"
               f" * error, or SVC_DEFERRED after svc_defer() to reply later. */\n"
               f"struct {itf.name}_ops {{\n")
    for m in itf.methods:
        out.append(f"    /* {m.doc} */\n    int64_t (*{m.name})({_handler_params(m)});\n")
    out.append("};\n\n")
    out.append(f"/* The service's handlers, defined in services/{itf.name}/. */\n"
               f"extern const struct {itf.name}_ops {itf.name}_ops;\n\n")
    out.append(f"/* The service's entry (the environments call it): {itf.name}_dispatch\n"
               f" * with the service's handlers. */\n"
               f"void {itf.name}_service(struct svc_call *call);\n"
               f"/* The user server loop's register path: SVC_FAST_* (see {itf.name}_fast). */\n"
               f"int {itf.name}_fastentry(struct svc_call *call, uint64_t *x);\n\n")
    if itf.fault_fast:
        out.append(f"/* The service's register entry for faults of its processes (fault_fast\n"
                   f" * = true), defined in services/{itf.name}/: a kernel placement offers it\n"
                   f" * each fault first, in the faulting thread's entry with the kernel lock\n"
                   f" * held, so it may answer only what takes a few steps (svc_reply) and\n"
                   f" * returns SVC_FAST_ANSWERED, or SVC_FAST_OTHER having done nothing. The\n"
                   f" * fault message (FAULT_MR_*) is `msg`, not in call->mr. */\n"
                   f"int {itf.name}_fault_fast(struct svc_call *call, const uint64_t *msg);\n\n")
    if itf.fault_shared:
        out.append(f"/* The part of {itf.name}_fault_fast that several cores may run at once\n"
                   f" * (fault_shared = true), defined in services/{itf.name}/: a kernel placement\n"
                   f" * on several cores offers it a Linux system call first, without the kernel\n"
                   f" * lock, while none of the service's other code runs. It may only read\n"
                   f" * the service's state and answer the caller (svc_reply, svc_copy_out_try),\n"
                   f" * taking a bounded number of steps; SVC_FAST_ANSWERED, or SVC_FAST_OTHER\n"
                   f" * having changed nothing but what svc_copy_out_try wrote. */\n"
                   f"int {itf.name}_fault_shared(struct svc_call *call, const uint64_t *msg);\n\n")
    out.append(f"/* The skeleton: handle one request (services' environments call it). */\n"
               f"void {itf.name}_dispatch(const struct {itf.name}_ops *ops, struct svc_call *call);\n"
               f"/* True if a request label belongs to this interface. */\n"
               f"static inline int {itf.name}_owns(uint64_t label) {{ return (label >> 16) == {up}_IF_ID; }}\n\n")
    out += _fast_entry(itf)
    for m in itf.methods:
        out.append(f"/* Reply later to a deferred {m.name}. */\n"
                   f"void {itf.name}_{m.name}_reply({_later_params(m)});\n")
    out.append("\n/* Client proxies: 0 or a negated error (transport or service). */\n")
    for m in itf.methods:
        out.append(f"int64_t {itf.name}_{m.name}({_proxy_params(m)});\n")
    out.append("\n#endif\n")
    return "".join(out)


def _pack(args, src_prefix: str, mr: str, at: int, lines: list, indent: str) -> int:
    for a in args:
        if a.type == "handle":
            continue                            # travels in the message's handle slots
        if a.type == "buffer":
            lines.append(f"{indent}{mr}[{at}] = (uint64_t)(uintptr_t){src_prefix}{a.name};\n")
            lines.append(f"{indent}{mr}[{at + 1}] = {src_prefix}{a.name}_len;\n")
            at += 2
        elif a.type in SCALARS:
            lines.append(f"{indent}{mr}[{at}] = (uint64_t){src_prefix}{a.name};\n")
            at += 1
        else:
            lines.append(f"{indent}{mr}[{at}] = {src_prefix}{a.name}_len;\n")
            lines.append(f"{indent}svc_bytes_put(&{mr}[{at + 1}], {src_prefix}{a.name}, {src_prefix}{a.name}_len);\n")
            at += 1 + (a.max + 7) // 8
    return at


# Packing of a method's outs into mr[] when the status is 0.
def _pack_outs(m: Method) -> list:
    if m.reply_mrs() == 1:
        return []
    lines = ["    if (status == 0) {\n"]
    _pack(m.outs, "", "mr", 1, lines, "        ")
    lines.append("    }\n")
    return lines


def _reply_len(m: Method) -> str:
    return "1" if m.reply_mrs() == 1 else f"status == 0 ? {m.reply_mrs()} : 1"


def server(itf: Interface) -> str:
    up = itf.name.upper()
    out = [HEADER.format(name=itf.name), f'#include "{itf.name}_if.h"\n\n']
    for m in itf.methods:
        out.append(f"static void do_{m.name}(const struct {itf.name}_ops *ops, struct svc_call *call)\n{{\n")
        out.append(f"    if (call->len != {m.request_mrs()} || call->nhandles != {m.request_handles()}) {{\n"
                   f"        svc_fail(call, SVC_E_INVAL);\n        return;\n    }}\n")
        at, hidx = 0, 0
        for a in m.ins:
            if a.type == "handle":
                out.append(f"    svc_handle {a.name} = call->handles[{hidx}];\n")
                hidx += 1
            elif a.type == "buffer":
                out.append(f"    uint64_t {a.name} = call->mr[{at}], {a.name}_len = call->mr[{at + 1}];\n")
                at += 2
            elif a.type in SCALARS:
                out.append(f"    {SCALARS[a.type]} {a.name} = ({SCALARS[a.type]})call->mr[{at}];\n")
                if a.type == "u32":
                    out.append(f"    if (call->mr[{at}] >> 32) {{\n        svc_fail(call, SVC_E_INVAL);\n        return;\n    }}\n")
                at += 1
            else:
                out.append(f"    uint32_t {a.name}_len = (uint32_t)call->mr[{at}];\n"
                           f"    if (call->mr[{at}] > {a.max}) {{\n        svc_fail(call, SVC_E_INVAL);\n        return;\n    }}\n"
                           f"    uint8_t {a.name}[{a.max}];\n"
                           f"    svc_bytes_get({a.name}, &call->mr[{at + 1}], {a.name}_len);\n")
                at += 1 + (a.max + 7) // 8
        for a in m.outs:
            if a.type == "handle":
                out.append(f"    svc_handle {a.name} = 0;\n")
            elif a.type in SCALARS:
                out.append(f"    {SCALARS[a.type]} {a.name} = 0;\n")
            else:
                out.append(f"    uint8_t {a.name}[{a.max}];\n    uint32_t {a.name}_len = 0;\n")
        args = ["call"]
        for a in m.ins:
            args += [a.name] if a.type in SCALARS or a.type == "handle" else [a.name, f"{a.name}_len"]
        for a in m.outs:
            args += [f"&{a.name}"] if a.type in SCALARS or a.type == "handle" else [a.name, f"&{a.name}_len"]
        out.append(f"    int64_t status = ops->{m.name}({', '.join(args)});\n")
        out.append("    if (status == SVC_DEFERRED)\n        return;\n")
        for a in m.outs:
            if a.type == "bytes":
                out.append(f"    if ({a.name}_len > {a.max})\n        status = SVC_E_RANGE;\n")
        out.append(f"    uint64_t mr[{m.reply_mrs()}] = {{ (uint64_t)status }};\n")
        out += _pack_outs(m)
        out += _reply_call(m, "svc_reply", "svc_reply_objects", "call", "call->label")
        out.append("}\n\n")
        out.append(f"void {itf.name}_{m.name}_reply({_later_params(m)})\n{{\n")
        for a in m.outs:
            if a.type == "bytes":
                out.append(f"    if ({a.name}_len > {a.max})\n        status = SVC_E_RANGE;\n")
        out.append(f"    uint64_t mr[{m.reply_mrs()}] = {{ (uint64_t)status }};\n")
        out += _pack_outs(m)
        out += _reply_call(m, "svc_reply_later", "svc_reply_later_objects", "token",
                           f"((uint64_t){up}_IF_ID << 16) | {m.number}")
        out.append("}\n\n")
    out.append(f"void {itf.name}_dispatch(const struct {itf.name}_ops *ops, struct svc_call *call)\n{{\n"
               f"    if ((call->label >> 16) != {up}_IF_ID) {{\n        svc_fail(call, SVC_E_INVAL);\n        return;\n    }}\n"
               f"    switch (call->label & 0xffff) {{\n")
    for m in itf.methods:
        out.append(f"    case {m.number}: do_{m.name}(ops, call); return;\n")
    out.append("    default: svc_fail(call, SVC_E_INVAL); return;\n    }\n}\n")
    if not itf.own_entry:
        out.append(f"\nvoid {itf.name}_service(struct svc_call *call)\n{{\n    {itf.name}_dispatch(&{itf.name}_ops, call);\n}}\n")
    # The user placement's register path: the server loop offers each
    # request here first (a service with its own entry sees every request).
    out.append(f"\nint {itf.name}_fastentry(struct svc_call *call, uint64_t *x)\n{{\n")
    if itf.own_entry:
        out.append("    (void)call;\n    (void)x;\n    return SVC_FAST_OTHER;\n}\n")
    else:
        out.append(f"    return {itf.name}_fast(call, x);\n}}\n")
    return "".join(out)


# A message word of method m with `length` registers, no handles, no flags.
def _word(itf: Interface, m: Method, length: int) -> str:
    up = itf.name.upper()
    return f"MSG_INFO(((uint64_t){up}_IF_ID << 16) | {up}_{m.name.upper()}, {length}, 0)"


# The register entry: one function per register-only method (<name>_fast_<method>),
# and <name>_fast, which picks one by the exact request word (label, length,
# no handles, no flags). A u32 argument with stray bits is left to the
# skeleton, which refuses it with E_INVAL. Inline, so that the kernel's side
# of the call (ksvc_fast, ksvc_light) and this make one function.
def _fast_entry(itf: Interface) -> list:
    fast = itf.register_methods()
    out = []
    for m in fast:
        out.append(f"/* {m.name}: the register entry of one request word ({itf.name}_fast). */\n"
                   f"static inline int {itf.name}_fast_{m.name}(struct svc_call *call, uint64_t *x)\n{{\n")
        for i, a in enumerate(m.ins):
            if a.type == "u32":
                out.append(f"    if (x[{2 + i}] >> 32)\n        return SVC_FAST_OTHER;\n")
        for a in m.outs:
            out.append(f"    {SCALARS[a.type]} {a.name} = 0;\n")
        args = ["call"] + [f"({SCALARS[a.type]})x[{2 + i}]" for i, a in enumerate(m.ins)] + [f"&{a.name}" for a in m.outs]
        out.append(f"    int64_t status = {itf.name}_ops.{m.name}({', '.join(args)});\n")
        out.append("    if (status == SVC_DEFERRED)\n        return SVC_FAST_KEPT;\n")
        out.append(f"    uint64_t reply = {_word(itf, m, 1)};\n")
        if m.outs:
            out.append("    if (status == 0) {\n")
            for i, a in enumerate(m.outs):
                out.append(f"        x[{3 + i}] = (uint64_t){a.name};\n")
            out.append(f"        reply = {_word(itf, m, m.reply_mrs())};\n    }}\n")
        out.append("    x[0] = 0;\n    x[1] = reply;\n    x[2] = (uint64_t)status;\n    return SVC_FAST_ANSWERED;\n}\n\n")
    out.append(f"/* The register entry: a register-only request straight from the caller's\n"
               f" * registers x[0..9] (x[1] the message word, x[2..7] MR0..MR5). It answers\n"
               f" * into them (x0 0, x1 the reply's word, x2 the status, x3.. the outs):\n"
               f" * SVC_FAST_ANSWERED, or SVC_FAST_KEPT if the handler kept the reply. Any\n"
               f" * other request: SVC_FAST_OTHER, having done nothing ({itf.name}_service\n"
               f" * answers it). */\n"
               f"static inline int {itf.name}_fast(struct svc_call *call, uint64_t *x)\n{{\n")
    if not fast:
        return out + ["    (void)call;\n    (void)x;\n    return SVC_FAST_OTHER;\n}\n\n"]
    out.append("    switch (x[1]) {\n")
    for m in fast:
        out.append(f"    case {_word(itf, m, m.request_mrs())}:\n        return {itf.name}_fast_{m.name}(call, x);\n")
    out.append("    default:\n        return SVC_FAST_OTHER;\n    }\n}\n\n")
    return out


# The client proxies. `kernel`: for a kernel-placed service's calls, every
# method through svc_client_call (no inline system call: there is none to
# make from the kernel).
def client(itf: Interface, kernel: bool = False) -> str:
    up = itf.name.upper()
    transport = "svc_transport.h" if kernel else "svc_client.h"
    out = [HEADER.format(name=itf.name), f'#include "{itf.name}_if.h"\n#include "{transport}"\n\n']
    for m in itf.methods:
        if m.register_only() and not kernel:
            out += _register_proxy(itf, m)
            continue
        words = max(m.request_mrs(), m.reply_mrs())
        out.append(f"int64_t {itf.name}_{m.name}({_proxy_params(m)})\n{{\n")
        out.append(f"    uint64_t mr[{words}] = {{ 0 }};\n")
        for a in m.ins:
            if a.type == "bytes":
                out.append(f"    if ({a.name}_len > {a.max})\n        return SVC_E_INVAL;\n")
        _pack(m.ins, "", "mr", 0, out, "    ")
        handles = [a.name for a in m.ins if a.type == "handle"]
        if handles:
            out.append(f"    uint32_t handles[{len(handles)}] = {{ {', '.join(handles)} }};\n")
        outs = m.reply_handles()
        if outs:
            out.append(f"    uint32_t got[{MAX_HANDLES}] = {{ 0 }};\n")
        out.append(f"    int64_t err = svc_client_call(ep, ((uint64_t){up}_IF_ID << 16) | {m.number}, "
                   f"{m.request_mrs()}, mr, {words}, {len(handles)}, {'handles' if handles else '0'}, "
                   f"{'got' if outs else '0'});\n")
        if outs:
            want = " || ".join(f"!got[{i}]" for i in range(len(outs)))
            out.append(f"    if (err < 0)\n        return err;\n"
                       f"    if ((int64_t)mr[0] < 0 || err != {m.reply_mrs()} || {want}) {{\n"
                       f"        svc_client_drop(got);\n"
                       f"        return (int64_t)mr[0] < 0 ? (int64_t)mr[0] : SVC_E_INVAL;\n    }}\n")
            for i, a in enumerate(outs):
                out.append(f"    *{a.name} = got[{i}];\n")
        else:
            out.append("    if (err < 0)\n        return err;\n"
                       f"    if ((int64_t)mr[0] < 0)\n        return (int64_t)mr[0];\n"
                       f"    if (err != {m.reply_mrs()})\n        return SVC_E_INVAL;\n")
        at = 1
        for a in m.outs:
            if a.type == "handle":
                continue
            if a.type in SCALARS:
                out.append(f"    *{a.name} = ({SCALARS[a.type]})mr[{at}];\n")
                at += 1
            else:
                drop = "svc_client_drop(got);\n        " if outs else ""
                out.append(f"    if (mr[{at}] > {a.max}) {{\n        {drop}return SVC_E_INVAL;\n    }}\n"
                           f"    *{a.name}_len = (uint32_t)mr[{at}];\n"
                           f"    svc_bytes_get({a.name}, &mr[{at + 1}], *{a.name}_len);\n")
                at += 1 + (a.max + 7) // 8
        out.append("    return 0;\n}\n\n")
    return "".join(out)


# The proxy of a register-only method: the IPC call itself, inline. Only the
# registers of the arguments are set: the kernel passes no register beyond
# the message's length to a user-placed server (each side keeps its own
# there), so the rest need no zeroing and count as clobbered; a reply that
# is not a plain success of the right length goes to svc_client_status.
def _register_proxy(itf: Interface, m: Method) -> list:
    out = [f"int64_t {itf.name}_{m.name}({_proxy_params(m)})\n{{\n",
           "    register uint64_t x0 __asm__(\"x0\") = ep;\n",
           f"    register uint64_t x1 __asm__(\"x1\") = {_word(itf, m, m.request_mrs())};\n"]
    for i in range(REG_MRS):
        if i < len(m.ins):
            out.append(f"    register uint64_t x{2 + i} __asm__(\"x{2 + i}\") = (uint64_t){m.ins[i].name};\n")
        else:
            out.append(f"    register uint64_t x{2 + i} __asm__(\"x{2 + i}\");\n")
    out.append("    register uint64_t x8 __asm__(\"x8\");\n    register uint64_t x9 __asm__(\"x9\");\n")
    regs = ", ".join([f'"+r"(x{i})' for i in range(2 + len(m.ins))] +
                     [f'"=r"(x{2 + i})' for i in range(len(m.ins), REG_MRS)])
    out.append(f"    __asm__ volatile(\"svc %[nr]\"\n        : {regs}, \"=r\"(x8), \"=r\"(x9)\n"
               "        : [nr] \"i\"(SYS_IPC_CALL) : \"memory\");\n")
    # the call succeeded, the reply has the right length and no handles, the status is 0 or more
    check = f"x0 != 0 || (x1 & 0xff) != {m.reply_mrs()} || (int64_t)x2 < 0"
    if not m.outs:
        out.append(f"    if ({check})\n        return svc_client_status(x0, x1, x2, {m.reply_mrs()});\n")
    else:
        out.append(f"    if ({check}) {{\n"
                   f"        int64_t err = svc_client_status(x0, x1, x2, {m.reply_mrs()});\n"
                   "        if (err)\n            return err;\n    }\n")
    for i, a in enumerate(m.outs):
        out.append(f"    *{a.name} = ({SCALARS[a.type]})x{3 + i};\n")
    out.append("    return 0;\n}\n\n")
    return out


# Compiles one interface into outdir.
def compile_interface(path: Path, outdir: Path) -> Interface:
    itf = load(path)
    write_if_changed(outdir / f"{itf.name}_if.h", header(itf))
    write_if_changed(outdir / f"{itf.name}_server.c", server(itf))
    write_if_changed(outdir / f"{itf.name}_client.c", client(itf))
    write_if_changed(outdir / f"{itf.name}_kclient.c", client(itf, kernel=True))
    return itf


# The kernel's table of the services compiled into it: one entry per
# interface, pointing at the service's entry (<name>_service), at the
# fastpath's call (the kernel's ksvc_fast with the register entry inlined)
# and at its light calls: per register-only method, ksvc_light with that
# method's register entry inlined, keyed by the method's request word.
def kernel_table(interfaces: list) -> str:
    out = ["/* Generated by tools/petrel/idlc.py from the services present: do not edit. */\n",
           '#include "ksvc.h"\n']
    for itf in interfaces:
        out.append(f'#include "{itf.name}_if.h"\n')
    for itf in interfaces:
        out.append(f"\nstatic struct trapframe *{itf.name}_fastcall(struct trapframe *tf, struct endpoint *ep, "
                   f"uint64_t info, uint64_t badge)\n{{\n"
                   f"    return ksvc_fast({itf.name}_fast, tf, ep, info, badge);\n}}\n")
        fast = itf.register_methods()
        for m in fast:
            out.append(f"\nstatic uintptr_t {itf.name}_light_{m.name}(struct trapframe *tf)\n{{\n"
                       f"    return ksvc_light({itf.name}_fast_{m.name}, tf);\n}}\n")
        if fast:
            out.append(f"\nstatic const struct ksvc_light {itf.name}_lights[] = {{\n")
            for m in fast:
                out.append(f"    {{ {_word(itf, m, m.request_mrs())}, {itf.name}_light_{m.name} }},\n")
            out.append("};\n")
    out.append(f"\n_Static_assert({len(interfaces)} <= KSVC_BUILTIN_MAX, "
               f"\"a run for each service built in (KSVC_BUILTIN_MAX)\");\n")
    out.append("\nconst struct ksvc ksvc_table[] = {\n")
    for i, itf in enumerate(interfaces):
        fault = f"{itf.name}_fault_fast" if itf.fault_fast else "NULL"
        fault += f", {itf.name}_fault_shared" if itf.fault_shared else ", NULL"
        nfast = len(itf.register_methods())
        lights = f"{itf.name}_lights, {nfast}" if nfast else "NULL, 0"
        out.append(f'    {{ {itf.id}, "{itf.name}", {itf.name}_service, {itf.name}_fastcall, &ksvc_runs[{i}], '
                   f'{fault}, {lights} }},\n')
    out.append("};\n\nconst unsigned ksvc_count = sizeof(ksvc_table) / sizeof(ksvc_table[0]);\n")
    return "".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="petrel.idlc", description=__doc__.splitlines()[0])
    p.add_argument("--kernel-table", type=Path, metavar="FILE",
                   help="write the kernel's service table for the given interfaces instead")
    p.add_argument("outdir", type=Path)
    p.add_argument("idl", type=Path, nargs="+")
    args = p.parse_args(argv)
    try:
        if args.kernel_table:
            itfs = sorted((load(path) for path in args.idl), key=lambda i: i.id)
            ids = [i.id for i in itfs]
            if len(ids) != len(set(ids)):
                raise IdlError("two interfaces share an id")
            write_if_changed(args.kernel_table, kernel_table(itfs))
            return 0
        for path in args.idl:
            compile_interface(path, args.outdir)
    except IdlError as e:
        print(f"idlc: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
