#!/usr/bin/env python3
"""Writes rshmem's public C headers, the type lists of every layer and the link-coverage test
from one description.

    python3 scripts/gen_headers.py          # (re)write the files below
    python3 scripts/gen_headers.py --check  # exit 1 if a committed file differs from the output

Outputs:
    include/shmem.h           the OpenSHMEM 1.5 C API (typed routines, C11 generic macros)
    include/shmemx.h          rshmem extensions (includes shmem.h)
    include/pshmem.h          the profiling interface: pshmem_NAME for each shmem_/shmemx_ routine
    src/capi/aliases.ld       the linker script that defines those names (and OSHMEM's shmemx_
                              names of standard routines) as aliases
    ctest/host/api_link.c     takes the address of every function declared in both headers,
                              so a test binary only links if librshmem defines all of them
    src/capi/type_tables.rs   the Rust macros the typed C entry points are expanded over
    device/rshmem_common.h    its RSHMEMI_REPT_* type X-macros (between the GENERATED markers)

The element types of every table come from scripts/type_table.py (the only list of them).

How to read this file: the type tables come first (imported from scripts/type_table.py),
then the ABI constants, then one small function per chapter of the
specification. Typed families are written once as a signature template:

    "void shmem_{c}{N}_put({C}{T} *dest, const {T} *source, size_t nelems, int pe)"

where {N} is the TYPENAME, {T} the C type, and {c}/{C} are empty for the default-context
routine and "ctx_"/"shmem_ctx_t ctx, " for its context variant. `typed()` expands a template
over a table; `generic()` writes the matching C11 _Generic macro.

ABI notes (values follow Open MPI's OSHMEM so binaries built against it run on rshmem):
  * shmem_ctx_t is a pointer to an opaque struct; SHMEM_CTX_DEFAULT is the exported object
    `oshmem_ctx_default`. Teams (absent from OSHMEM 4.1) are small integers in pointer
    clothing: handle = team-table index + 1, so WORLD = 1, SHARED = 2, INVALID = 0.
  * The pSync/pWrk sizes are OSHMEM's. rshmem never reads pSync contents, so they only need
    to exist.
  * Point-to-point sync and lock routines take `volatile TYPE *`: the spec writes `TYPE *`,
    older programs (and OSHMEM's header) pass volatile objects; a volatile parameter accepts
    both without a diagnostic and has the same ABI.
  * Names the spec reuses are resolved the usual way: the C symbols shmem_wait_until and
    shmem_sync are the deprecated long / active-set routines; under C11 the macros of the same
    names dispatch to the typed and team routines.
"""

import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------------------------
# Type tables: scripts/type_table.py, the one list of element types (TYPENAME -> C, Rust).
# --------------------------------------------------------------------------------------------

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from type_table import (  # noqa: E402  (the table lives beside this script)
    TYPES, FP16, RMA, AMO_STANDARD, AMO_EXTENDED, AMO_BITWISE, SYNC, REDUCE_BITWISE,
    REDUCE_COMPARE, REDUCE_ARITH, DEPR_AMO_STANDARD, DEPR_AMO_EXTENDED, DEPR_WAIT,
    TO_ALL_BITWISE, TO_ALL_COMPARE, TO_ALL_ARITH, RUST_TABLES, RUST_KIND_TABLES, DEVICE_TABLES,
    OSHMEM_AMO_BITWISE)

C_TYPE = {n: c for n, (c, _, _) in TYPES.items()}

# What the fixed-width typedefs are on LP64 Linux (x86-64, aarch64). Only used to avoid listing
# one type twice in a _Generic association list (which C forbids).
LP64 = {
    "int8_t": "signed char", "int16_t": "short", "int32_t": "int", "int64_t": "long",
    "uint8_t": "unsigned char", "uint16_t": "unsigned short", "uint32_t": "unsigned int",
    "uint64_t": "unsigned long", "size_t": "unsigned long", "ptrdiff_t": "long",
    "RSHMEM_COMPLEXF": "float _Complex", "RSHMEM_COMPLEXD": "double _Complex",
}

SIZES = ["8", "16", "32", "64", "128"]

# --------------------------------------------------------------------------------------------
# Output helpers
# --------------------------------------------------------------------------------------------

FUNCTIONS = []  # every function name declared, in order, for api_link.c
SIGNATURES = []  # (name, signature, deprecated) of each, for pshmem.h


def decl(signature, deprecated=False):
    """One prototype; records the function name for the link test."""
    name = signature.split("(")[0].split()[-1].lstrip("*")
    FUNCTIONS.append(name)
    SIGNATURES.append((name, signature, deprecated))
    return signature + ";" + (" /* deprecated */" if deprecated else "")


def typed(template, table, ctx=True, **extra):
    """Expand a signature template over a type table, each type's ctx variant right after it."""
    out = []
    for n in table:
        for with_ctx in ([False, True] if ctx else [False]):
            out.append(template.format(
                N=n, T=C_TYPE[n], c="ctx_" if with_ctx else "",
                C="shmem_ctx_t ctx, " if with_ctx else "", **extra))
    return out


def sized(template, sizes, ctx=True):
    """Expand a template over the SIZE suffixes (8 ... 128, "mem")."""
    out = []
    for s in sizes:
        for with_ctx in ([False, True] if ctx else [False]):
            out.append(template.format(S=s, c="ctx_" if with_ctx else "",
                                       C="shmem_ctx_t ctx, " if with_ctx else ""))
    return out


def block(title, signatures, deprecated=False):
    lines = ["", "/* " + title + " */"]
    lines += [decl(s, deprecated) for s in signatures]
    return lines


def section(title):
    bar = "/* " + "-" * 92 + " */"
    return ["", bar, "/* " + title.ljust(92) + " */", bar]

# --------------------------------------------------------------------------------------------
# Header prelude: includes, constants, handle types
# --------------------------------------------------------------------------------------------

BANNER = """/*
 * {what}
 *
 * GENERATED by scripts/gen_headers.py -- do not edit; change the script and run it.
 */"""


HEADER_ABOUT = """shmem.h: the OpenSHMEM 1.5 C API of rshmem.
 *
 * Sections follow the specification's chapters: setup, memory, teams, contexts, RMA, signals,
 * AMOs, collectives, point-to-point synchronization, ordering and locks. Routines marked
 * "deprecated" are kept for programs written against earlier versions. C11 programs also get
 * the type-generic macros at the end (shmem_put(dest, src, n, pe), shmem_put(ctx, ...), ...).
 * Constant values and the shmem_ctx_t representation match Open MPI's OSHMEM."""


def vendor():
    """shmem_info_get_name's string (src/capi/setup.rs), which SHMEM_VENDOR_STRING must equal."""
    text = open(os.path.join(ROOT, "src/capi/setup.rs")).read()
    return re.search(r'pub const VENDOR: &str = "([^"]*)";', text).group(1)


def prelude():
    return BANNER.format(what=HEADER_ABOUT).splitlines() + """
#ifndef RSHMEM_SHMEM_H
#define RSHMEM_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <complex>
#define RSHMEM_COMPLEXF std::complex<float>
#define RSHMEM_COMPLEXD std::complex<double>
#else
#define RSHMEM_COMPLEXF float _Complex
#define RSHMEM_COMPLEXD double _Complex
#endif

/* Library and specification version */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_VENDOR_STRING "%s"
#define SHMEM_MAX_NAME_LEN 256
/* shmem4py (the OpenSHMEM Python binding) knows an implementation by its header macros, and
 * replaces the 1.5 routines of one it does not know with stubs that clash with the declarations
 * here. These two are what it looks for to know a complete 1.5 implementation (Sandia
 * OpenSHMEM's names); SHMEM_VENDOR_STRING still says rshmem. */
#define SHMEM_DEF_H 1
#define SHMEM_FUNCTION_ATTRIBUTES

/* Thread support levels (shmem_init_thread) */
enum {
    SHMEM_THREAD_SINGLE = 0,
    SHMEM_THREAD_FUNNELED = 1,
    SHMEM_THREAD_SERIALIZED = 2,
    SHMEM_THREAD_MULTIPLE = 3
};

/* Comparison operators (wait_until, test, signal_wait_until) */
enum shmem_wait_ops {
    SHMEM_CMP_EQ = 0,
    SHMEM_CMP_NE = 1,
    SHMEM_CMP_GT = 2,
    SHMEM_CMP_LE = 3,
    SHMEM_CMP_LT = 4,
    SHMEM_CMP_GE = 5
};

/* Signal operators (put_signal) */
#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* Memory hints (shmem_malloc_with_hints) */
#define SHMEM_MALLOC_ATOMICS_REMOTE 1
#define SHMEM_MALLOC_SIGNAL_REMOTE 2

/* Contexts: options of shmem_ctx_create, the handle type, the default and invalid contexts */
#define SHMEM_CTX_PRIVATE 1
#define SHMEM_CTX_SERIALIZED 2
#define SHMEM_CTX_NOSTORE 4
typedef struct { int dummy; } *shmem_ctx_t;
#define SHMEM_CTX_DEFAULT oshmem_ctx_default
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* Teams: handle = team-table index + 1 */
typedef struct rshmem_team_handle *shmem_team_t;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
#define SHMEM_TEAM_WORLD ((shmem_team_t)1)
#define SHMEM_TEAM_SHARED ((shmem_team_t)2)
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS 1

/* Work-array sizes of the deprecated active-set collectives (pSync contents are not used) */
#define SHMEM_BARRIER_SYNC_SIZE 1
#define SHMEM_BCAST_SYNC_SIZE 2
#define SHMEM_COLLECT_SYNC_SIZE 3
#define SHMEM_REDUCE_SYNC_SIZE 3
#define SHMEM_ALLTOALL_SYNC_SIZE 1
#define SHMEM_ALLTOALLS_SYNC_SIZE 1
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define SHMEM_SYNC_SIZE 3
#define SHMEM_SYNC_VALUE (-1)

/* Deprecated constant names (OpenSHMEM 1.3 and earlier) */
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_ALLTOALLS_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE
#define _SHMEM_SYNC_SIZE SHMEM_SYNC_SIZE
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE

#ifdef __cplusplus
extern "C" {
#endif

/* The default context, an object exported by the library */
extern shmem_ctx_t oshmem_ctx_default;""".replace('"%s"', '"%s"' % vendor()).splitlines()

# --------------------------------------------------------------------------------------------
# Declarations, one function per chapter of the specification
# --------------------------------------------------------------------------------------------


def setup():
    return section("Library setup, exit and query, accessibility, shmem_ptr") + block(
        "Setup, exit and query", [
            "void shmem_init(void)",
            "int shmem_init_thread(int requested, int *provided)",
            "void shmem_query_thread(int *provided)",
            "void shmem_finalize(void)",
            "void shmem_global_exit(int status)",
            "int shmem_my_pe(void)",
            "int shmem_n_pes(void)",
            "int shmem_pe_accessible(int pe)",
            "int shmem_addr_accessible(const void *addr, int pe)",
            "void *shmem_ptr(const void *dest, int pe)",
            "void shmem_info_get_version(int *major, int *minor)",
            "void shmem_info_get_name(char *name)",
        ]) + block("Profiling control (rshmem does nothing with it; a profiling library may)", [
            "void shmem_pcontrol(const int level, ...)",
        ]) + block("Deprecated setup and query (pre-1.2 names)", [
            "void start_pes(int npes)",
            "int _my_pe(void)",
            "int _num_pes(void)",
        ], deprecated=True)


def memory():
    return section("Memory management") + block("Symmetric heap", [
        "void *shmem_malloc(size_t size)",
        "void shmem_free(void *ptr)",
        "void *shmem_realloc(void *ptr, size_t size)",
        "void *shmem_align(size_t alignment, size_t size)",
        "void *shmem_malloc_with_hints(size_t size, long hints)",
        "void *shmem_calloc(size_t count, size_t size)",
    ]) + block("Deprecated allocation names (pre-1.2)", [
        "void *shmalloc(size_t size)",
        "void shfree(void *ptr)",
        "void *shrealloc(void *ptr, size_t size)",
        "void *shmemalign(size_t alignment, size_t size)",
    ], deprecated=True)


def teams():
    return section("Team management") + block("Teams", [
        "int shmem_team_my_pe(shmem_team_t team)",
        "int shmem_team_n_pes(shmem_team_t team)",
        "int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)",
        "int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)",
        "void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)",
        "int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,"
        " const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)",
        "int shmem_team_split_2d(shmem_team_t parent_team, int xrange,"
        " const shmem_team_config_t *xaxis_config, long xaxis_mask, shmem_team_t *xaxis_team,"
        " const shmem_team_config_t *yaxis_config, long yaxis_mask, shmem_team_t *yaxis_team)",
        "void shmem_team_destroy(shmem_team_t team)",
    ])


def contexts():
    return section("Communication management: contexts") + block("Contexts", [
        "int shmem_ctx_create(long options, shmem_ctx_t *ctx)",
        "int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)",
        "void shmem_ctx_destroy(shmem_ctx_t ctx)",
        "int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)",
    ])


RMA_TYPED = {
    "put": "void shmem_{c}{N}_put({C}{T} *dest, const {T} *source, size_t nelems, int pe)",
    "get": "void shmem_{c}{N}_get({C}{T} *dest, const {T} *source, size_t nelems, int pe)",
    "p": "void shmem_{c}{N}_p({C}{T} *dest, {T} value, int pe)",
    "g": "{T} shmem_{c}{N}_g({C}const {T} *source, int pe)",
    "iput": "void shmem_{c}{N}_iput({C}{T} *dest, const {T} *source, ptrdiff_t dst, ptrdiff_t sst,"
            " size_t nelems, int pe)",
    "iget": "void shmem_{c}{N}_iget({C}{T} *dest, const {T} *source, ptrdiff_t dst, ptrdiff_t sst,"
            " size_t nelems, int pe)",
    "put_nbi": "void shmem_{c}{N}_put_nbi({C}{T} *dest, const {T} *source, size_t nelems, int pe)",
    "get_nbi": "void shmem_{c}{N}_get_nbi({C}{T} *dest, const {T} *source, size_t nelems, int pe)",
}


def rma():
    lines = section("Remote memory access")
    for op, template in RMA_TYPED.items():
        lines += block("shmem_TYPENAME_" + op, typed(template, RMA))
    lines += block("shmem_putSIZE, shmem_putmem", sized(
        "void shmem_{c}put{S}({C}void *dest, const void *source, size_t nelems, int pe)", SIZES + ["mem"]))
    lines += block("shmem_getSIZE, shmem_getmem", sized(
        "void shmem_{c}get{S}({C}void *dest, const void *source, size_t nelems, int pe)", SIZES + ["mem"]))
    lines += block("shmem_iputSIZE", sized(
        "void shmem_{c}iput{S}({C}void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,"
        " size_t nelems, int pe)", SIZES))
    lines += block("shmem_igetSIZE", sized(
        "void shmem_{c}iget{S}({C}void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,"
        " size_t nelems, int pe)", SIZES))
    lines += block("shmem_putSIZE_nbi, shmem_putmem_nbi", sized(
        "void shmem_{c}put{S}_nbi({C}void *dest, const void *source, size_t nelems, int pe)", SIZES + ["mem"]))
    lines += block("shmem_getSIZE_nbi, shmem_getmem_nbi", sized(
        "void shmem_{c}get{S}_nbi({C}void *dest, const void *source, size_t nelems, int pe)", SIZES + ["mem"]))
    return lines


SIGNAL_ARGS = "size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe"


def signals():
    lines = section("Signaling operations")
    for nbi in ["", "_nbi"]:
        lines += block("shmem_TYPENAME_put_signal" + nbi, typed(
            "void shmem_{c}{N}_put_signal" + nbi + "({C}{T} *dest, const {T} *source, " + SIGNAL_ARGS + ")", RMA))
        lines += block("shmem_putSIZE_signal" + nbi + ", shmem_putmem_signal" + nbi, sized(
            "void shmem_{c}put{S}_signal" + nbi + "({C}void *dest, const void *source, " + SIGNAL_ARGS + ")",
            SIZES + ["mem"]))
    lines += block("Signal fetch and wait", [
        "uint64_t shmem_signal_fetch(const uint64_t *sig_addr)",
        "uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)",
    ])
    return lines


# Atomic memory operations: name -> (template, table). {T} value operands, {N} typename.
AMO = [
    ("atomic_fetch", "{T} shmem_{c}{N}_atomic_fetch({C}const {T} *source, int pe)", AMO_EXTENDED),
    ("atomic_set", "void shmem_{c}{N}_atomic_set({C}{T} *dest, {T} value, int pe)", AMO_EXTENDED),
    ("atomic_compare_swap", "{T} shmem_{c}{N}_atomic_compare_swap({C}{T} *dest, {T} cond, {T} value, int pe)",
     AMO_STANDARD),
    ("atomic_swap", "{T} shmem_{c}{N}_atomic_swap({C}{T} *dest, {T} value, int pe)", AMO_EXTENDED),
    ("atomic_fetch_inc", "{T} shmem_{c}{N}_atomic_fetch_inc({C}{T} *dest, int pe)", AMO_STANDARD),
    ("atomic_inc", "void shmem_{c}{N}_atomic_inc({C}{T} *dest, int pe)", AMO_STANDARD),
    ("atomic_fetch_add", "{T} shmem_{c}{N}_atomic_fetch_add({C}{T} *dest, {T} value, int pe)", AMO_STANDARD),
    ("atomic_add", "void shmem_{c}{N}_atomic_add({C}{T} *dest, {T} value, int pe)", AMO_STANDARD),
    ("atomic_fetch_and", "{T} shmem_{c}{N}_atomic_fetch_and({C}{T} *dest, {T} value, int pe)", AMO_BITWISE),
    ("atomic_and", "void shmem_{c}{N}_atomic_and({C}{T} *dest, {T} value, int pe)", AMO_BITWISE),
    ("atomic_fetch_or", "{T} shmem_{c}{N}_atomic_fetch_or({C}{T} *dest, {T} value, int pe)", AMO_BITWISE),
    ("atomic_or", "void shmem_{c}{N}_atomic_or({C}{T} *dest, {T} value, int pe)", AMO_BITWISE),
    ("atomic_fetch_xor", "{T} shmem_{c}{N}_atomic_fetch_xor({C}{T} *dest, {T} value, int pe)", AMO_BITWISE),
    ("atomic_xor", "void shmem_{c}{N}_atomic_xor({C}{T} *dest, {T} value, int pe)", AMO_BITWISE),
]

# Nonblocking fetching AMOs (new in 1.5): the result goes to *fetch.
AMO_NBI = [
    ("atomic_fetch_nbi", "void shmem_{c}{N}_atomic_fetch_nbi({C}{T} *fetch, const {T} *source, int pe)",
     AMO_EXTENDED),
    ("atomic_compare_swap_nbi", "void shmem_{c}{N}_atomic_compare_swap_nbi({C}{T} *fetch, {T} *dest, {T} cond,"
     " {T} value, int pe)", AMO_STANDARD),
    ("atomic_swap_nbi", "void shmem_{c}{N}_atomic_swap_nbi({C}{T} *fetch, {T} *dest, {T} value, int pe)",
     AMO_EXTENDED),
    ("atomic_fetch_inc_nbi", "void shmem_{c}{N}_atomic_fetch_inc_nbi({C}{T} *fetch, {T} *dest, int pe)",
     AMO_STANDARD),
    ("atomic_fetch_add_nbi", "void shmem_{c}{N}_atomic_fetch_add_nbi({C}{T} *fetch, {T} *dest, {T} value,"
     " int pe)", AMO_STANDARD),
    ("atomic_fetch_and_nbi", "void shmem_{c}{N}_atomic_fetch_and_nbi({C}{T} *fetch, {T} *dest, {T} value,"
     " int pe)", AMO_BITWISE),
    ("atomic_fetch_or_nbi", "void shmem_{c}{N}_atomic_fetch_or_nbi({C}{T} *fetch, {T} *dest, {T} value,"
     " int pe)", AMO_BITWISE),
    ("atomic_fetch_xor_nbi", "void shmem_{c}{N}_atomic_fetch_xor_nbi({C}{T} *fetch, {T} *dest, {T} value,"
     " int pe)", AMO_BITWISE),
]

# Deprecated (1.3) names: no context variants. Their C11 macros map to the new routines.
AMO_DEPRECATED = [
    ("swap", "{T} shmem_{N}_swap({T} *dest, {T} value, int pe)", DEPR_AMO_EXTENDED, "atomic_swap"),
    ("cswap", "{T} shmem_{N}_cswap({T} *dest, {T} cond, {T} value, int pe)", DEPR_AMO_STANDARD,
     "atomic_compare_swap"),
    ("finc", "{T} shmem_{N}_finc({T} *dest, int pe)", DEPR_AMO_STANDARD, "atomic_fetch_inc"),
    ("inc", "void shmem_{N}_inc({T} *dest, int pe)", DEPR_AMO_STANDARD, "atomic_inc"),
    ("fadd", "{T} shmem_{N}_fadd({T} *dest, {T} value, int pe)", DEPR_AMO_STANDARD, "atomic_fetch_add"),
    ("add", "void shmem_{N}_add({T} *dest, {T} value, int pe)", DEPR_AMO_STANDARD, "atomic_add"),
    ("fetch", "{T} shmem_{N}_fetch(const {T} *source, int pe)", DEPR_AMO_EXTENDED, "atomic_fetch"),
    ("set", "void shmem_{N}_set({T} *dest, {T} value, int pe)", DEPR_AMO_EXTENDED, "atomic_set"),
]


def atomics():
    lines = section("Atomic memory operations")
    for op, template, table in AMO + AMO_NBI:
        lines += block("shmem_TYPENAME_" + op, typed(template, table))
    for op, template, table, _ in AMO_DEPRECATED:
        lines += block("Deprecated shmem_TYPENAME_" + op, typed(template, table, ctx=False), deprecated=True)
    return lines


# Collectives on teams (1.5) and their active-set predecessors.
COLL_TYPED = {
    "broadcast": "int shmem_{N}_broadcast(shmem_team_t team, {T} *dest, const {T} *source, size_t nelems,"
                 " int PE_root)",
    "collect": "int shmem_{N}_collect(shmem_team_t team, {T} *dest, const {T} *source, size_t nelems)",
    "fcollect": "int shmem_{N}_fcollect(shmem_team_t team, {T} *dest, const {T} *source, size_t nelems)",
    "alltoall": "int shmem_{N}_alltoall(shmem_team_t team, {T} *dest, const {T} *source, size_t nelems)",
    "alltoalls": "int shmem_{N}_alltoalls(shmem_team_t team, {T} *dest, const {T} *source, ptrdiff_t dst,"
                 " ptrdiff_t sst, size_t nelems)",
}
ACTIVE_SET = "int PE_start, int logPE_stride, int PE_size, long *pSync"
REDUCE_OPS = [("and", REDUCE_BITWISE, TO_ALL_BITWISE), ("or", REDUCE_BITWISE, TO_ALL_BITWISE),
              ("xor", REDUCE_BITWISE, TO_ALL_BITWISE), ("max", REDUCE_COMPARE, TO_ALL_COMPARE),
              ("min", REDUCE_COMPARE, TO_ALL_COMPARE), ("sum", REDUCE_ARITH, TO_ALL_ARITH),
              ("prod", REDUCE_ARITH, TO_ALL_ARITH)]


def collectives():
    lines = section("Collective routines")
    lines += block("Barriers and syncs", [
        "void shmem_barrier_all(void)",
        "void shmem_sync_all(void)",
        "int shmem_team_sync(shmem_team_t team)",
    ])
    lines += block("Deprecated active-set barrier and sync (C11: shmem_sync(team) is a macro, below)", [
        "void shmem_barrier(" + ACTIVE_SET + ")",
        "void shmem_sync(" + ACTIVE_SET + ")",
    ], deprecated=True)
    for op, template in COLL_TYPED.items():
        lines += block("shmem_TYPENAME_" + op, typed(template, RMA, ctx=False))
    lines += block("Byte-granularity collectives", [
        "int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)",
        "int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)",
        "int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)",
        "int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)",
        "int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,"
        " ptrdiff_t sst, size_t nelems)",
    ])
    depr = []
    for bits in ["32", "64"]:
        depr += [
            "void shmem_broadcast%s(void *dest, const void *source, size_t nelems, int PE_root, %s)"
            % (bits, ACTIVE_SET),
            "void shmem_collect%s(void *dest, const void *source, size_t nelems, %s)" % (bits, ACTIVE_SET),
            "void shmem_fcollect%s(void *dest, const void *source, size_t nelems, %s)" % (bits, ACTIVE_SET),
            "void shmem_alltoall%s(void *dest, const void *source, size_t nelems, %s)" % (bits, ACTIVE_SET),
            "void shmem_alltoalls%s(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,"
            " %s)" % (bits, ACTIVE_SET),
        ]
    lines += block("Deprecated active-set collectives", depr, deprecated=True)
    for op, table, _ in REDUCE_OPS:
        lines += block("shmem_TYPENAME_%s_reduce" % op, typed(
            "int shmem_{N}_%s_reduce(shmem_team_t team, {T} *dest, const {T} *source, size_t nreduce)" % op,
            table, ctx=False))
    for op, _, table in REDUCE_OPS:
        lines += block("Deprecated shmem_TYPENAME_%s_to_all" % op, typed(
            "void shmem_{N}_%s_to_all({T} *dest, const {T} *source, int nreduce, int PE_start,"
            " int logPE_stride, int PE_size, {T} *pWrk, long *pSync)" % op, table, ctx=False), deprecated=True)
    return lines


# Point-to-point synchronization: (name, template) over the SYNC table.
P2P = [
    ("wait_until", "void shmem_{N}_wait_until(volatile {T} *ivar, int cmp, {T} cmp_value)"),
    ("wait_until_all", "void shmem_{N}_wait_until_all(volatile {T} *ivars, size_t nelems, const int *status,"
     " int cmp, {T} cmp_value)"),
    ("wait_until_any", "size_t shmem_{N}_wait_until_any(volatile {T} *ivars, size_t nelems, const int *status,"
     " int cmp, {T} cmp_value)"),
    ("wait_until_some", "size_t shmem_{N}_wait_until_some(volatile {T} *ivars, size_t nelems, size_t *indices,"
     " const int *status, int cmp, {T} cmp_value)"),
    ("wait_until_all_vector", "void shmem_{N}_wait_until_all_vector(volatile {T} *ivars, size_t nelems,"
     " const int *status, int cmp, {T} *cmp_values)"),
    ("wait_until_any_vector", "size_t shmem_{N}_wait_until_any_vector(volatile {T} *ivars, size_t nelems,"
     " const int *status, int cmp, {T} *cmp_values)"),
    ("wait_until_some_vector", "size_t shmem_{N}_wait_until_some_vector(volatile {T} *ivars, size_t nelems,"
     " size_t *indices, const int *status, int cmp, {T} *cmp_values)"),
    ("test", "int shmem_{N}_test(volatile {T} *ivar, int cmp, {T} cmp_value)"),
    ("test_all", "int shmem_{N}_test_all(volatile {T} *ivars, size_t nelems, const int *status, int cmp,"
     " {T} cmp_value)"),
    ("test_any", "size_t shmem_{N}_test_any(volatile {T} *ivars, size_t nelems, const int *status, int cmp,"
     " {T} cmp_value)"),
    ("test_some", "size_t shmem_{N}_test_some(volatile {T} *ivars, size_t nelems, size_t *indices,"
     " const int *status, int cmp, {T} cmp_value)"),
    ("test_all_vector", "int shmem_{N}_test_all_vector(volatile {T} *ivars, size_t nelems, const int *status,"
     " int cmp, {T} *cmp_values)"),
    ("test_any_vector", "size_t shmem_{N}_test_any_vector(volatile {T} *ivars, size_t nelems,"
     " const int *status, int cmp, {T} *cmp_values)"),
    ("test_some_vector", "size_t shmem_{N}_test_some_vector(volatile {T} *ivars, size_t nelems,"
     " size_t *indices, const int *status, int cmp, {T} *cmp_values)"),
]


def p2p():
    lines = section("Point-to-point synchronization")
    for op, template in P2P:
        lines += block("shmem_TYPENAME_" + op, typed(template, SYNC, ctx=False))
    lines += block("Deprecated waits (C11: shmem_wait_until is the generic macro, below)", typed(
        "void shmem_{N}_wait(volatile {T} *ivar, {T} cmp_value)", DEPR_WAIT, ctx=False) + [
        "void shmem_wait(volatile long *ivar, long cmp_value)",
        "void shmem_wait_until(volatile long *ivar, int cmp, long cmp_value)",
    ], deprecated=True)
    return lines


def ordering_and_locks():
    return section("Memory ordering, distributed locking, cache management") + block(
        "Fence and quiet", [
            "void shmem_fence(void)",
            "void shmem_ctx_fence(shmem_ctx_t ctx)",
            "void shmem_quiet(void)",
            "void shmem_ctx_quiet(shmem_ctx_t ctx)",
        ]) + block("Locks", [
            "void shmem_set_lock(volatile long *lock)",
            "void shmem_clear_lock(volatile long *lock)",
            "int shmem_test_lock(volatile long *lock)",
        ]) + block("Deprecated cache management (no-ops on coherent hardware)", [
            "void shmem_clear_cache_inv(void)",
            "void shmem_set_cache_inv(void)",
            "void shmem_clear_cache_line_inv(void *dest)",
            "void shmem_set_cache_line_inv(void *dest)",
            "void shmem_udcflush(void)",
            "void shmem_udcflush_line(void *dest)",
        ], deprecated=True)

# --------------------------------------------------------------------------------------------
# C11 type-generic macros
# --------------------------------------------------------------------------------------------
# A macro dispatches on the type of one pointer argument ("pos", counted from 1 without ctx).
# With ctx=True it also accepts a leading shmem_ctx_t: the outer _Generic looks at argument 1;
# if that is a context, an inner _Generic looks at argument pos + 1. The inner selection is
# type-checked even when not taken, so it carries a default that names no real function.


def generic_types(table):
    """(C type, TYPENAME) pairs of a table, each underlying C type once (first TYPENAME wins)."""
    seen, out = set(), []
    for n in table:
        base = LP64.get(C_TYPE[n], C_TYPE[n])
        if base not in seen:
            seen.add(base)
            out.append((C_TYPE[n], n))
    return out


def associations(table, func, quals):
    spell = lambda c: LP64[c] if c.startswith("RSHMEM_") else c  # C11 code: plain C complex types
    return ["%s%s *: %s" % (q, spell(c), func.format(N=n)) for c, n in generic_types(table) for q in quals]


def generic(macro, table, func, pos=1, ctx=True, quals=("",)):
    """#define macro(...) as a _Generic over `table`; func is e.g. "shmem_{c}{N}_put"."""
    arg = "RSHMEM_C11_ARG%d(__VA_ARGS__)"
    items = ["        " + a for a in associations(table, func.replace("{c}", ""), quals)]
    if ctx:
        inner = associations(table, func.replace("{c}", "ctx_"), quals)
        inner.append("default: rshmem_c11_type_not_supported")
        items.append("        shmem_ctx_t: _Generic(" + arg % (pos + 1) + ", \\\n"
                     + ", \\\n".join("            " + a for a in inner) + ")")
    text = ("#define %s(...) \\\n    _Generic(%s, \\\n" % (macro, arg % pos)
            + ", \\\n".join(items) + " \\\n    )(__VA_ARGS__)")
    return text.splitlines()


CONST = ("", "const ")
VOLATILE = ("", "volatile ")


def generics():
    lines = ["", "/* " + "-" * 92 + " */",
             "/* C11 type-generic interfaces (OpenSHMEM 1.5 names; an optional leading shmem_ctx_t)".ljust(95) + " */",
             "/* " + "-" * 92 + " */", "",
             "#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)",
             "",
             "/* Argument pickers (the trailing dummies keep ISO C happy with short argument lists) */",
             "#define RSHMEM_C11_ARG1(...) RSHMEM_C11_ARG1_(__VA_ARGS__, rshmem_unused_)",
             "#define RSHMEM_C11_ARG1_(a, ...) a",
             "#define RSHMEM_C11_ARG2(...) RSHMEM_C11_ARG2_(__VA_ARGS__, rshmem_unused_, rshmem_unused_)",
             "#define RSHMEM_C11_ARG2_(a, b, ...) b",
             "/* Selected only when a generic call names a type the spec does not support: the compiler",
             " * then reports a call to this (never defined) function with too many arguments. */",
             "void rshmem_c11_type_not_supported(void);"]

    def add(title, new):
        lines.extend(["", "/* " + title + " */"] + new)

    for op in ["put", "get", "iput", "iget", "put_nbi", "get_nbi", "put_signal", "put_signal_nbi"]:
        add("shmem_" + op, generic("shmem_" + op, RMA, "shmem_{c}{N}_" + op))
    add("shmem_p", generic("shmem_p", RMA, "shmem_{c}{N}_p"))
    add("shmem_g", generic("shmem_g", RMA, "shmem_{c}{N}_g", quals=CONST))
    for op, _, table in AMO + AMO_NBI:
        quals = CONST if op == "atomic_fetch" else ("",)
        add("shmem_" + op, generic("shmem_" + op, table, "shmem_{c}{N}_" + op, quals=quals))
    for op, _, table, new in AMO_DEPRECATED:
        quals = CONST if op == "fetch" else ("",)
        add("shmem_%s (deprecated)" % op, generic("shmem_" + op, table, "shmem_{N}_" + new, ctx=False,
                                                   quals=quals))
    for op, _ in P2P:
        add("shmem_" + op, generic("shmem_" + op, SYNC, "shmem_{N}_" + op, ctx=False, quals=VOLATILE))
    for op in COLL_TYPED:
        add("shmem_" + op, generic("shmem_" + op, RMA, "shmem_{N}_" + op, pos=2, ctx=False))
    for op, table, _ in REDUCE_OPS:
        add("shmem_%s_reduce" % op, generic("shmem_%s_reduce" % op, table, "shmem_{N}_%s_reduce" % op,
                                            pos=2, ctx=False))
    add("shmem_sync: a team, or the deprecated active set", [
        "#define shmem_sync(...) \\",
        "    _Generic(RSHMEM_C11_ARG1(__VA_ARGS__), \\",
        "        shmem_team_t: shmem_team_sync, \\",
        "        default: shmem_sync \\",
        "    )(__VA_ARGS__)"])
    lines += ["", "#endif /* C11 */"]
    return lines


# --------------------------------------------------------------------------------------------
# Open MPI OSHMEM's shmemx_ routines (its shmemx.h): programs built with its oshcc call them, so
# an LD_PRELOADed rshmem must define them. All but one are another name of a routine rshmem has
# (same types on LP64: int16/32/64 = short/int/long): (name, prototype, target).
# --------------------------------------------------------------------------------------------

SIZED_INT = {"16": "short", "32": "int", "64": "long"}


def oshmem_shmemx():
    out = [("shmemx_malloc_with_hint", "void *shmemx_malloc_with_hint(size_t size, long hint)",
            "shmem_malloc_with_hints")]
    for b in ["16", "32", "64"]:
        T = "int%s_t" % b
        out += [("shmemx_int%s_p" % b, "void shmemx_int%s_p(%s *addr, %s value, int pe)" % (b, T, T), "shmem_int%s_p" % b),
                ("shmemx_int%s_g" % b, "%s shmemx_int%s_g(const %s *addr, int pe)" % (T, b, T), "shmem_int%s_g" % b)]
    for b in ["32", "64"]:
        T, n = "int%s_t" % b, "int%s" % b
        out += [
            ("shmemx_%s_swap" % n, "%s shmemx_%s_swap(%s *target, %s value, int pe)" % (T, n, T, T), "shmem_%s_atomic_swap" % n),
            ("shmemx_%s_set" % n, "void shmemx_%s_set(%s *target, %s value, int pe)" % (n, T, T), "shmem_%s_atomic_set" % n),
            ("shmemx_%s_cswap" % n, "%s shmemx_%s_cswap(%s *target, %s cond, %s value, int pe)" % (T, n, T, T, T),
             "shmem_%s_atomic_compare_swap" % n),
            ("shmemx_%s_fadd" % n, "%s shmemx_%s_fadd(%s *target, %s value, int pe)" % (T, n, T, T), "shmem_%s_atomic_fetch_add" % n),
            ("shmemx_%s_fetch" % n, "%s shmemx_%s_fetch(const %s *target, int pe)" % (T, n, T), "shmem_%s_atomic_fetch" % n),
            ("shmemx_%s_finc" % n, "%s shmemx_%s_finc(%s *target, int pe)" % (T, n, T), "shmem_%s_atomic_fetch_inc" % n),
            ("shmemx_%s_add" % n, "void shmemx_%s_add(%s *target, %s value, int pe)" % (n, T, T), "shmem_%s_atomic_add" % n),
            ("shmemx_%s_inc" % n, "void shmemx_%s_inc(%s *target, int pe)" % (n, T), "shmem_%s_atomic_inc" % n),
            ("shmemx_%s_wait" % n, "void shmemx_%s_wait(%s *addr, %s value)" % (n, T, T), "shmem_%s_wait" % SIZED_INT[b]),
            ("shmemx_%s_wait_until" % n, "void shmemx_%s_wait_until(%s *addr, int cmp, %s value)" % (n, T, T),
             "shmem_%s_wait_until" % n),
        ]
        for u in ["int", "uint"]:
            T, n = "%s%s_t" % (u, b), "%s%s" % (u, b)
            for op in ["and", "or", "xor"]:
                out += [("shmemx_%s_atomic_%s" % (n, op), "void shmemx_%s_atomic_%s(%s *target, %s value, int pe)" % (n, op, T, T),
                         "shmem_%s_atomic_%s" % (n, op)),
                        ("shmemx_%s_atomic_fetch_%s" % (n, op),
                         "%s shmemx_%s_atomic_fetch_%s(%s *target, %s value, int pe)" % (T, n, op, T, T),
                         "shmem_%s_atomic_fetch_%s" % (n, op))]
    for op in ["and", "or", "xor", "max", "min", "sum", "prod"]:
        for b in ["16", "32", "64"]:
            T = "int%s_t" % b
            out.append(("shmemx_int%s_%s_to_all" % (b, op),
                        "void shmemx_int%s_%s_to_all(%s *target, const %s *source, int nreduce, int PE_start,"
                        " int logPE_stride, int PE_size, %s *pWrk, long *pSync)" % (b, op, T, T, T),
                        "shmem_%s_%s_to_all" % (SIZED_INT[b], op)))
    return out


# --------------------------------------------------------------------------------------------
# C++ overloads of the generic interfaces (C++ has no _Generic): the same names and dispatch
# as the C11 macros above, written as inline functions that call the typed routines.
# --------------------------------------------------------------------------------------------


def params_and_args(signature):
    """("RET", "params", "arg names") of a prototype."""
    head, params = signature.split("(", 1)
    params = params.rsplit(")", 1)[0]
    ret = head.rsplit(None, 1)[0] + ("*" if head.split()[-1].startswith("*") else "")
    names = [p.split()[-1].lstrip("*") for p in params.split(", ")]
    return ret.replace(" *", "*").replace("*", " *").strip(), params, ", ".join(names)


def overloads(generic_name, template, table, ctx=True):
    """One inline overload per distinct C++ type of `table` (and its ctx variant)."""
    out = []
    for _, n in generic_types(table):
        for with_ctx in ([False, True] if ctx else [False]):
            sig = template.format(N=n, T=C_TYPE[n], c="ctx_" if with_ctx else "",
                                  C="shmem_ctx_t ctx, " if with_ctx else "")
            typed_name = sig.split("(")[0].split()[-1].lstrip("*")
            ret, params, args = params_and_args(sig)
            out.append("inline %s %s(%s) { return %s(%s); }" % (ret, generic_name, params, typed_name, args))
    return out


def cxx_overloads():
    lines = ["", "/* " + "-" * 92 + " */",
             "/* C++ overloads of the generic interfaces (what the C11 macros give C programs)".ljust(95) + " */",
             "/* " + "-" * 92 + " */", "", "#ifdef __cplusplus"]

    def add(title, new):
        lines.extend(["", "/* " + title + " */"] + new)

    for op, template in RMA_TYPED.items():
        add("shmem_" + op, overloads("shmem_" + op, template, RMA))
    for nbi in ["", "_nbi"]:
        add("shmem_put_signal" + nbi, overloads("shmem_put_signal" + nbi,
            "void shmem_{c}{N}_put_signal" + nbi + "({C}{T} *dest, const {T} *source, " + SIGNAL_ARGS + ")", RMA))
    for op, template, table in AMO + AMO_NBI:
        add("shmem_" + op, overloads("shmem_" + op, template, table))
    amo_templates = {op: (template, table) for op, template, table in AMO}
    for op, _, table, new in AMO_DEPRECATED:
        add("shmem_%s (deprecated)" % op, overloads("shmem_" + op, amo_templates[new][0], table, ctx=False))
    for op, template in P2P:
        add("shmem_" + op, overloads("shmem_" + op, template, SYNC, ctx=False))
    for op, template in COLL_TYPED.items():
        add("shmem_" + op, overloads("shmem_" + op, template, RMA, ctx=False))
    for op, table, _ in REDUCE_OPS:
        add("shmem_%s_reduce" % op, overloads("shmem_%s_reduce" % op,
            "int shmem_{N}_%s_reduce(shmem_team_t team, {T} *dest, const {T} *source, size_t nreduce)" % op,
            table, ctx=False))
    add("shmem_sync(team)", ["inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }"])
    lines += c99_complex_overloads()
    lines += ["", "#endif /* __cplusplus */"]
    return lines


# C++ declares the complex routines with std::complex; C++ code written for other OpenSHMEM
# libraries passes C99 `float _Complex *` (GCC and Clang accept _Complex in C++), which has the
# same layout: a second overload of each name takes those and casts.
C99_COMPLEX = {"RSHMEM_COMPLEXF": ("float _Complex", "std::complex<float>"),
               "RSHMEM_COMPLEXD": ("double _Complex", "std::complex<double>")}


def c99_complex_overloads():
    out = ["", "/* The complex routines with C99 complex types (GCC, Clang) */", "#if defined(__GNUC__)"]
    generic = {"sum_reduce", "prod_reduce"}
    for name, signature, _ in SIGNATURES:
        if "RSHMEM_COMPLEX" not in signature or not name.startswith("shmem_complex"):
            continue
        ret, params, _ = params_and_args(signature)
        c99_params, args = [], []
        for p in params.split(", "):
            arg = p.split()[-1].lstrip("*")
            for macro, (c99, cxx) in C99_COMPLEX.items():
                if macro in p:
                    p = p.replace(macro, c99)
                    arg = "reinterpret_cast<%s%s *>(%s)" % ("const " if p.startswith("const") else "", cxx, arg)
            c99_params.append(p)
            args.append(arg)
        body = "{ return %s(%s); }" % (name, ", ".join(args))
        out.append("inline %s %s(%s) %s" % (ret, name, ", ".join(c99_params), body))
        op = name.split("_", 2)[2]
        if op in generic:
            out.append("inline %s shmem_%s(%s) %s" % (ret, op, ", ".join(c99_params), body))
    return out + ["#endif"]


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def shmem_h():
    lines = prelude()
    for family in [setup, memory, teams, contexts, rma, signals, atomics, collectives, p2p,
                   ordering_and_locks]:
        lines += family()
    lines += ["", "#ifdef __cplusplus", "} /* extern \"C\" */", "#endif"]
    lines += generics()
    lines += cxx_overloads()
    lines += ["", "#endif /* RSHMEM_SHMEM_H */"]
    return "\n".join(lines) + "\n"


def shmemx_h():
    lines = BANNER.format(what="shmemx.h: rshmem extensions to OpenSHMEM (names start with shmemx_).").splitlines()
    lines += ["#ifndef RSHMEM_SHMEMX_H", "#define RSHMEM_SHMEMX_H", "", "#include <shmem.h>", "",
              "#ifdef __cplusplus", "extern \"C\" {", "#endif", "",
              "/* Seconds from a monotonic clock (arbitrary origin): for timing intervals, like MPI_Wtime. */",
              "#define HAVE_SHMEMX_WTIME 1",
              decl("double shmemx_wtime(void)"),
              "",
              "/* Open MPI OSHMEM's extensions, for programs written for it (sized-integer names of",
              " * standard routines; shmemx_malloc_with_hint ignores the hint). */"]
    lines += [decl(sig) for _, sig, _ in oshmem_shmemx()]
    lines += ["/* Each PE puts size bytes to each PE (block j of source to PE j, landing in block",
              " * my_pe of dest), then atomically adds 1 to counter on that PE once its data is",
              " * there; returns when all of it is done (rshmem completes it before returning). */",
              decl("void shmemx_alltoall_global_nb(void *dest, const void *source, size_t size, long *counter)"),
              "", "#ifdef __cplusplus", "} /* extern \"C\" */", "#endif", "",
              "#endif /* RSHMEM_SHMEMX_H */"]
    return "\n".join(lines) + "\n"


PSHMEM_ABOUT = """pshmem.h: the OpenSHMEM profiling interface of rshmem.
 *
 * Every routine of shmem.h and shmemx.h also exists as pshmem_NAME (pshmemx_NAME): the same
 * code under a second name. A profiling library defines shmem_NAME itself (loaded before
 * librshmem: linked first or LD_PRELOAD), does its accounting and calls pshmem_NAME, which
 * always reaches rshmem's implementation. The library's aliases are src/capi/aliases.ld."""


def profiled(name):
    """The routines with a profiling name: shmem_* and shmemx_* (not the pre-1.2 names)."""
    return name.startswith("shmem_") or name.startswith("shmemx_")


def pshmem_h(signatures):
    lines = BANNER.format(what=PSHMEM_ABOUT).splitlines()
    lines += ["#ifndef RSHMEM_PSHMEM_H", "#define RSHMEM_PSHMEM_H", "", "#include <shmem.h>",
              "#include <shmemx.h>", "", "#ifdef __cplusplus", "extern \"C\" {", "#endif", ""]
    for name, signature, deprecated in signatures:
        if profiled(name):
            lines.append(signature.replace(name + "(", "p" + name + "(", 1) + ";"
                         + (" /* deprecated */" if deprecated else ""))
    lines += ["", "#ifdef __cplusplus", "} /* extern \"C\" */", "#endif", "", "#endif /* RSHMEM_PSHMEM_H */"]
    return "\n".join(lines) + "\n"


def aliases_ld(functions):
    lines = ["/* Second names of rshmem's routines, defined when librshmem.so is linked (build.rs passes",
             " * this linker script; src/capi/librshmem.map exports them):",
             " *   - Open MPI OSHMEM's shmemx_ names of standard routines (shmemx.h);",
             " *   - the profiling names (pshmem.h): pshmem_NAME is shmem_NAME's code.",
             " *",
             " * GENERATED by scripts/gen_headers.py -- do not edit; change the script and run it. */"]
    lines += ["%s = %s;" % (name, target) for name, _, target in oshmem_shmemx()]
    lines += ["p%s = %s;" % (f, f) for f in functions + oshmem_only_bitwise() if profiled(f)]
    return "\n".join(lines) + "\n"


def oshmem_only_bitwise():
    """The bitwise AMOs librshmem defines for OSHMEM's extra types (OSHMEM_AMO_BITWISE) without
    declaring them: they get profiling names too (OSHMEM exports pshmem_int_atomic_and...)."""
    return ["shmem_%s%s_%s" % (c, t, op) for op, _, table in AMO + AMO_NBI if table is AMO_BITWISE
            for t in OSHMEM_AMO_BITWISE for c in ("", "ctx_")]


def api_link_c(functions):
    lines = ["/* rshmem-test: pes=1 */",
             "/*",
             " * api_link.c: every function declared in shmem.h, shmemx.h and pshmem.h, by address. The test only links",
             " * when librshmem defines all of them; at run time it checks none is NULL.",
             " *",
             " * GENERATED by scripts/gen_headers.py -- do not edit; change the script and run it.",
             " */",
             "#include <stdio.h>",
             "#include <shmem.h>",
             "#include <shmemx.h>",
             "#include <pshmem.h>",
             "",
             "typedef void (*api_fn)(void);",
             "",
             "static api_fn volatile functions[] = {"]
    lines += ["    (api_fn)%s," % f for f in functions]
    lines += ["    (api_fn)p%s," % f for f in functions if profiled(f)]
    lines += ["};",
              "",
              "/* Exported objects */",
              "static const void *volatile objects[] = {",
              "    &oshmem_ctx_default,",
              "};",
              "",
              "int main(void)",
              "{",
              "    size_t i, n = sizeof functions / sizeof functions[0];",
              "    size_t m = sizeof objects / sizeof objects[0];",
              "    int missing = 0;",
              "    shmem_init();",
              "    for (i = 0; i < n; i++) {",
              "        if (functions[i] == NULL) {",
              "            fprintf(stderr, \"api_link: function %zu of %zu is NULL\\n\", i, n);",
              "            missing++;",
              "        }",
              "    }",
              "    for (i = 0; i < m; i++) {",
              "        if (objects[i] == NULL) {",
              "            fprintf(stderr, \"api_link: object %zu of %zu is NULL\\n\", i, m);",
              "            missing++;",
              "        }",
              "    }",
              "    printf(\"api_link: %zu functions and %zu objects linked\\n\", n, m);",
              "    shmem_finalize();",
              "    return missing ? 1 : 0;",
              "}"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# The type lists of the other layers: Rust macros (src/capi/type_tables.rs) and the device
# X-macros (a region of device/rshmem_common.h), from the same table.
# --------------------------------------------------------------------------------------------


def wrap(items, width):
    """Items joined by single spaces into lines of at most `width` characters."""
    lines, line = [], ""
    for item in items:
        if line and len(line) + 1 + len(item) > width:
            lines.append(line)
            line = item
        else:
            line = (line + " " + item) if line else item
    return lines + ([line] if line else [])


def rust_list(table, value):
    """`TYPENAME => value, ...` lines (no comma after the last: not every caller takes one)."""
    items = ["%s => %s," % (n, value(n)) for n in table]
    items[-1] = items[-1].rstrip(",")
    return wrap(items, 104)


def type_tables_rs():
    lines = ["//! The element-type lists of the typed C entry points, one macro per table.",
             "//!",
             "//! GENERATED by scripts/gen_headers.py from scripts/type_table.py -- do not edit; change the",
             "//! table and run the script (`make lint` fails while this file is stale).",
             "//!",
             "//! `table!(m)` calls back `m! { TYPENAME => RustType, ... }`, and `table!(m, ARGS)` calls back",
             "//! `m! { ARGS; TYPENAME => RustType, ... }`; the C names of the routines are built from",
             "//! TYPENAME (`shmem_<TYPENAME>_put`). The `nvshmem_*_reduce_types` tables pair each TYPENAME",
             "//! with its GPU reduction kind instead and always take ARGS: `m! { ARGS; TYPENAME => Kind, ... }`."]
    for name, (table, about) in RUST_TABLES.items():
        lines += ["", "/// " + about, "#[macro_export]", "macro_rules! %s {" % name,
                  "    ($m:ident $(, $($args:tt)*)?) => {", "        $m! { $($($args)*;)?"]
        lines += ["            " + l for l in rust_list(table, lambda n: TYPES[n][1])]
        lines += ["        }", "    };", "}"]
    for name, (table, about) in RUST_KIND_TABLES.items():
        lines += ["", "/// " + about, "macro_rules! %s {" % name, "    ($m:ident, $($args:tt)*) => {",
                  "        $m! { $($args)*;"]
        lines += ["            " + l for l in rust_list(table, lambda n: TYPES[n][2])]
        lines += ["        }", "    };", "}"]
    return "\n".join(lines) + "\n"


DEVICE_BEGIN = "/* ---- type tables: X(NAME, TYPE) "
DEVICE_END = "/* ---- end of the generated type tables */"


def continued(head, body):
    """A #define over several lines, each continued with a backslash in column 100."""
    rows = [head] + ["    " + l for l in body]
    return [r.ljust(98) + " \\" for r in rows[:-1]] + [rows[-1]]


def device_type_tables():
    lines = [DEVICE_BEGIN.ljust(92, "-") + " */",
             "/* GENERATED by scripts/gen_headers.py from scripts/type_table.py, up to the end marker. */"]
    for name, (table, about, extra) in DEVICE_TABLES.items():
        params = "X, " + extra if extra else "X"
        item = lambda n: "X(%s, %s%s)" % (n, C_TYPE[n], ", " + extra if extra else "")
        fp16 = [n for n in table if n in FP16]
        body = []
        for i, n in enumerate(table):
            if n not in FP16:
                body.append(item(n))
            elif n == fp16[0]:
                assert table[i:i + len(fp16)] == fp16, name + ": the fp16 types must be adjacent"
                body.append("%s_FP16(%s)" % (name, params))
        lines += ["", "/* " + about + " */"]
        if fp16:
            lines += ["#if defined(RSHMEMI_HAVE_FP16)",
                      "#define %s_FP16(%s) %s" % (name, params, " ".join(item(n) for n in fp16)),
                      "#else", "#define %s_FP16(%s)" % (name, params), "#endif"]
        lines += continued("#define %s(%s)" % (name, params), wrap(body, 92))
    return lines + ["", DEVICE_END]


def rshmem_common_h():
    """device/rshmem_common.h with its type-table region regenerated (the rest is written by hand)."""
    text = open(os.path.join(ROOT, "device/rshmem_common.h")).read()
    begin, end = text.index(DEVICE_BEGIN), text.index(DEVICE_END) + len(DEVICE_END)
    return text[:begin] + "\n".join(device_type_tables()) + text[end:]


def outputs():
    FUNCTIONS.clear()
    SIGNATURES.clear()
    h = shmem_h()
    hx = shmemx_h()
    dup = sorted({f for f in FUNCTIONS if FUNCTIONS.count(f) > 1})
    if dup:
        sys.exit("gen_headers: declared twice: " + ", ".join(dup))
    return {
        "include/shmem.h": h,
        "include/shmemx.h": hx,
        "include/pshmem.h": pshmem_h(list(SIGNATURES)),
        "src/capi/aliases.ld": aliases_ld(list(FUNCTIONS)),
        "ctest/host/api_link.c": api_link_c(list(FUNCTIONS)),
        "src/capi/type_tables.rs": type_tables_rs(),
        "device/rshmem_common.h": rshmem_common_h(),
    }


def main(argv):
    check = "--check" in argv[1:]
    stale = 0
    for rel, text in outputs().items():
        path = os.path.join(ROOT, rel)
        old = open(path).read() if os.path.exists(path) else None
        if old == text:
            continue
        if check:
            stale += 1
            sys.stderr.writelines(difflib.unified_diff(
                (old or "").splitlines(True), text.splitlines(True), rel + " (committed)", rel + " (generated)"))
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
            print("gen_headers: wrote " + rel)
    if check and stale:
        sys.exit("gen_headers: %d file(s) differ from scripts/gen_headers.py's output; run it" % stale)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
