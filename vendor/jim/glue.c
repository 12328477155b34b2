/* Goblin Core's C glue for Jim Tcl: what the Rust engine (src/script/tcl/) needs from Jim that is a
 * macro or a struct field in jim.h, the tagged values that keep a reply's RESP meaning inside a
 * script, and the sandbox applied to every new interpreter. */

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "jim.h"

/* ---- Memory ----
 * Jim never checks an allocation for NULL, so a limit cannot be a refused allocation. Every block
 * is on the list of an arena (a header before it names it): the EVAL interpreter's, or the
 * interpreter of one function library. Allocations go to the current arena (goblin_jim_arena_use;
 * a block that grows stays in its own). While a script runs (goblin_jim_call), an allocation that
 * would take its arena past the cap jumps out of the script instead of allocating. The
 * interpreter is then abandoned half-way through a command, so it is never used again:
 * goblin_jim_arena_clear() frees every block of its arena (and no other's), and the engine makes
 * a fresh one. No Rust frame is ever jumped over: the Rust `redis` command marks itself
 * (goblin_jim_host), and allocations inside it are never refused (the next command boundary
 * stops the script). */

typedef struct Arena Arena;

typedef struct Block {
    struct Block *prev, *next;
    size_t size;
    Arena *arena; /* also keeps the block 16-byte aligned */
} Block;

/* Jim allocates and frees a small object for nearly every word it evaluates: blocks of up to
 * SMALL_MAX bytes are sized to a multiple of 16 and, once freed, kept on their arena's spare list
 * for their size (up to SPARE_MAX bytes in all), so most allocations skip malloc and free. Spare
 * blocks are on no arena list and do not count as used. */
#define SMALL_MAX 256
#define SPARE_MAX (64 * 1024)

struct Arena {
    Block head;
    size_t used;
    Block *spare[SMALL_MAX / 16]; /* linked through `next` */
    size_t spare_bytes;
};

static __thread Arena main_arena;
static __thread Arena *current;
static __thread size_t cap;
static __thread int in_host;
static __thread jmp_buf *abort_to;

static Arena *arena_or_main(Arena *a)
{
    return a ? a : &main_arena;
}

static void link_block(Block *b)
{
    Block *head = &b->arena->head;
    if (head->next == NULL) {
        head->next = head->prev = head;
    }
    b->next = head->next;
    b->prev = head;
    head->next->prev = b;
    head->next = b;
}

static void unlink_block(Block *b)
{
    b->prev->next = b->next;
    b->next->prev = b->prev;
}

/* The spare list for a small size; its blocks hold (class + 1) * 16 bytes. */
static size_t size_class(size_t size)
{
    return (size + 15) / 16 - 1;
}

/* A block for `size` bytes in arena `a`, linked and counted; NULL if malloc fails. */
static Block *take_block(Arena *a, size_t size)
{
    Block *b;
    if (size <= SMALL_MAX) {
        size_t k = size_class(size);
        b = a->spare[k];
        if (b) {
            a->spare[k] = b->next;
            a->spare_bytes -= (k + 1) * 16;
        } else {
            b = malloc(sizeof(Block) + (k + 1) * 16);
        }
    } else {
        b = malloc(sizeof(Block) + size);
    }
    if (b == NULL) {
        return NULL;
    }
    b->size = size;
    b->arena = a;
    link_block(b);
    a->used += size;
    return b;
}

/* Unlinks, uncounts and frees (or keeps as spare) a block. */
static void release_block(Block *b)
{
    Arena *a = b->arena;
    unlink_block(b);
    a->used -= b->size;
    if (b->size <= SMALL_MAX) {
        size_t k = size_class(b->size);
        if (a->spare_bytes + (k + 1) * 16 <= SPARE_MAX) {
            b->next = a->spare[k];
            a->spare[k] = b;
            a->spare_bytes += (k + 1) * 16;
            return;
        }
    }
    free(b);
}

static void free_spares(Arena *a)
{
    for (size_t k = 0; k < SMALL_MAX / 16; k++) {
        while (a->spare[k]) {
            Block *b = a->spare[k];
            a->spare[k] = b->next;
            free(b);
        }
    }
    a->spare_bytes = 0;
}

static void *GoblinAlloc(void *ptr, size_t size)
{
    Block *b = ptr ? (Block *)ptr - 1 : NULL;
    size_t old = b ? b->size : 0;
    Arena *a = b ? b->arena : arena_or_main(current);
    Block *nb;

    if (size == 0) {
        if (b) {
            release_block(b);
        }
        return NULL;
    }
    if (abort_to && !in_host && cap && size > old && a->used - old + size > cap) {
        longjmp(*abort_to, 1);
    }
    if (b && old > SMALL_MAX && size > SMALL_MAX) {
        /* Large to large: realloc can often grow in place. */
        unlink_block(b);
        nb = realloc(b, sizeof(Block) + size);
        if (nb == NULL) {
            link_block(b);
        } else {
            nb->size = size;
            link_block(nb);
            a->used = a->used - old + size;
        }
    } else if (b && old <= SMALL_MAX && size <= SMALL_MAX && size_class(size) == size_class(old)) {
        /* Same small size class: the block already has room. */
        b->size = size;
        a->used = a->used - old + size;
        nb = b;
    } else {
        nb = take_block(a, size);
        if (nb && b) {
            memcpy(nb + 1, b + 1, old < size ? old : size);
            release_block(b);
        }
    }
    if (nb == NULL) {
        if (abort_to && !in_host) {
            longjmp(*abort_to, 1);
        }
        abort();
    }
    return nb + 1;
}

/* Bytes the current arena holds. */
size_t goblin_jim_used(void)
{
    return arena_or_main(current)->used;
}

/* A new, empty arena (for one library's interpreter). */
Arena *goblin_jim_arena_new(void)
{
    Arena *a = calloc(1, sizeof(Arena));
    if (a == NULL) {
        abort();
    }
    return a;
}

/* Makes `a` (NULL: the EVAL interpreter's) the arena new blocks go to; returns the previous one. */
Arena *goblin_jim_arena_use(Arena *a)
{
    Arena *prev = current;
    current = a;
    return prev;
}

/* Bytes an arena holds (NULL: the EVAL interpreter's). */
size_t goblin_jim_arena_used(Arena *a)
{
    return arena_or_main(a)->used;
}

/* Frees every block of an arena (NULL: the EVAL interpreter's), after goblin_jim_call returned
 * -1: the interpreter, abandoned mid-command, cannot free itself. */
void goblin_jim_arena_clear(Arena *a)
{
    Block *b;
    a = arena_or_main(a);
    if (a->head.next == NULL) {
        return;
    }
    while ((b = a->head.next) != &a->head) {
        unlink_block(b);
        free(b);
    }
    a->used = 0;
    free_spares(a);
}

/* Frees an arena made by goblin_jim_arena_new and every block left in it. */
void goblin_jim_arena_free(Arena *a)
{
    if (current == a) {
        current = NULL;
    }
    goblin_jim_arena_clear(a);
    free(a);
}

/* ---- Interrupts ----
 * Jim_InterruptHook (our patch) is asked after every command. The engine's own check (in Rust:
 * the time budget, SCRIPT KILL, the memory limit) is reached every CHECK_EVERY commands, at once
 * when the arena is past the cap (allocations inside a host command may take it there), and on
 * every command once it has asked for a stop; any other command pays one decrement. */
#define CHECK_EVERY 1000

static __thread unsigned countdown = CHECK_EVERY;
static int (*engine_check)(Jim_Interp *interp);

static int interrupt_hook(Jim_Interp *interp)
{
    int stop;

    if (--countdown > 0 && !(cap && arena_or_main(current)->used > cap)) {
        return 0;
    }
    stop = engine_check(interp);
    countdown = stop ? 1 : CHECK_EVERY;
    return stop;
}

/* Installs `check` as the engine's check behind the interrupt hook (before any interpreter). */
void goblin_jim_set_check(int (*check)(Jim_Interp *interp))
{
    engine_check = check;
    Jim_InterruptHook = interrupt_hook;
}

/* Runs objv as a command with allocations capped at `limit` bytes per arena (0: no cap). Returns
 * Jim's code, or -1 when an allocation past the cap abandoned the interpreter. */
int goblin_jim_call(Jim_Interp *interp, int objc, Jim_Obj *const *objv, size_t limit)
{
    jmp_buf jb;
    int rc;

    cap = limit;
    countdown = CHECK_EVERY;
    if (setjmp(jb)) {
        abort_to = NULL;
        in_host = 0;
        return -1;
    }
    abort_to = &jb;
    rc = Jim_EvalObjVector(interp, objc, objv);
    abort_to = NULL;
    return rc;
}

/* Entering (1) or leaving (0) a host command. */
void goblin_jim_host(int entering)
{
    in_host += entering ? 1 : -1;
}

/* ---- Tagged values ----
 * `redis call` replies and the `redis` constructors give objects of this type: a string whose
 * internal representation carries a tag (status, error, nil, ...) and, for maps and sets, the
 * list of elements. Used as a plain string (or converted to a list, an integer...) it is one;
 * returned unchanged as the script's result it keeps its RESP meaning. */

static void FreeTagged(Jim_Interp *interp, Jim_Obj *o)
{
    Jim_Obj *inner = o->internalRep.ptrIntValue.ptr;
    if (inner) {
        Jim_DecrRefCount(interp, inner);
    }
}

static void DupTagged(Jim_Interp *interp, Jim_Obj *src, Jim_Obj *dup)
{
    Jim_Obj *inner = src->internalRep.ptrIntValue.ptr;
    (void)interp;
    dup->internalRep = src->internalRep;
    if (inner) {
        Jim_IncrRefCount(inner);
    }
}

static const Jim_ObjType taggedType = { "redis-value", FreeTagged, DupTagged, NULL, JIM_TYPE_NONE };

/* A string tagged `tag`; `inner` (may be NULL) is a list of elements the value holds. */
Jim_Obj *goblin_jim_tagged(Jim_Interp *interp, const char *s, int len, int tag, Jim_Obj *inner)
{
    Jim_Obj *o;
    if (inner) {
        /* The string form of a map or set is its list of elements. */
        s = Jim_GetString(inner, &len);
    }
    o = Jim_NewStringObj(interp, s, len);
    o->typePtr = &taggedType;
    o->internalRep.ptrIntValue.ptr = inner;
    o->internalRep.ptrIntValue.int1 = tag;
    if (inner) {
        Jim_IncrRefCount(inner);
    }
    return o;
}

/* What a value is, for the reply: a tag (> 0) for tagged values; -1 integer, -2 double, -3 list,
 * -4 dict; 0 anything else (a string). */
int goblin_jim_kind(Jim_Obj *o)
{
    const Jim_ObjType *t = o->typePtr;
    if (t == NULL) {
        return 0;
    }
    if (t == &taggedType) {
        return o->internalRep.ptrIntValue.int1;
    }
    switch (t->name[0]) {
        case 'i':
            return strcmp(t->name, "int") == 0 ? -1 : 0;
        case 'd':
            if (strcmp(t->name, "double") == 0) {
                return -2;
            }
            return strcmp(t->name, "dict") == 0 ? -4 : 0;
        case 'c':
            return strcmp(t->name, "coerced-double") == 0 ? -2 : 0;
        case 'l':
            return strcmp(t->name, "list") == 0 ? -3 : 0;
    }
    return 0;
}

/* The element list of a tagged map or set (NULL for other values). */
Jim_Obj *goblin_jim_inner(Jim_Obj *o)
{
    return o->typePtr == &taggedType ? o->internalRep.ptrIntValue.ptr : NULL;
}

/* The name of a value's internal type ("" for a pure string). */
const char *goblin_jim_type_name(Jim_Obj *o)
{
    return o->typePtr ? o->typePtr->name : "";
}

/* ---- jim.h macros and fields ---- */

void goblin_jim_incr(Jim_Obj *o)
{
    Jim_IncrRefCount(o);
}

void goblin_jim_decr(Jim_Interp *interp, Jim_Obj *o)
{
    Jim_DecrRefCount(interp, o);
}

Jim_Obj *goblin_jim_result(Jim_Interp *interp)
{
    return Jim_GetResult(interp);
}

void goblin_jim_set_result(Jim_Interp *interp, Jim_Obj *o)
{
    Jim_SetResult(interp, o);
}

/* Changes whenever a command is created, renamed or deleted. */
unsigned long goblin_jim_epoch(Jim_Interp *interp)
{
    return interp->procEpoch;
}

/* How many global variables exist. */
unsigned goblin_jim_globals(Jim_Interp *interp)
{
    return interp->topFramePtr->vars.used;
}

/* The line of the innermost frame of the last error's stack trace (0 if unknown). */
int goblin_jim_error_line(Jim_Interp *interp)
{
    jim_wide line = 0;
    if (Jim_ListLength(interp, interp->stackTrace) >= 3) {
        Jim_GetWide(interp, Jim_ListGetIndex(interp, interp->stackTrace, 2), &line);
    }
    return (int)line;
}

/* ---- The sandbox ---- */

/* The core commands scripts keep; everything else (exit, source, env, puts, rename, xtrace...) is
 * deleted from a new interpreter. No extension (file, exec, open, load, package, aio, signal...)
 * is compiled in at all. */
static const char *const allowed[] = {
    "*", "+", "-", "/", "alias", "append", "apply", "break", "catch", "concat", "continue", "dict",
    "error", "eval", "exists", "expr", "for", "foreach", "format", "global", "if", "incr", "info",
    "join", "lappend", "lassign", "lindex", "linsert", "list", "llength", "lmap", "local", "loop",
    "lrange", "lrepeat", "lreplace", "lreverse", "lsearch", "lset", "lsort", "lsubst", "proc",
    "rand", "range", "return", "scan", "set", "split", "stacktrace", "string", "subst", "switch",
    "tailcall", "time", "timerate", "try", "unset", "upcall", "uplevel", "upvar", "while", NULL,
};

/* The `info` subcommands scripts keep (exact names: Jim accepts abbreviations). */
static const char *const allowed_info[] = {
    "args", "body", "commands", "complete", "exists", "globals", "level", "locals", "patchlevel",
    "procs", "returncodes", "statics", "vars", "version", NULL,
};

static Jim_CmdProc *core_info;

static int in(const char *const *names, const char *s)
{
    for (; *names; names++) {
        if (strcmp(*names, s) == 0) {
            return 1;
        }
    }
    return 0;
}

static int InfoCommand(Jim_Interp *interp, int argc, Jim_Obj *const *argv)
{
    if (argc < 2) {
        Jim_WrongNumArgs(interp, 1, argv, "subcommand ?arg ...?");
        return JIM_ERR;
    }
    if (!in(allowed_info, Jim_String(argv[1]))) {
        Jim_SetResultFormatted(interp, "info %#s is not allowed in scripts", argv[1]);
        return JIM_ERR;
    }
    return core_info(interp, argc, argv);
}

/* A new interpreter with the core commands, less those not on the allow-list, and no global
 * variables but the two that catch and error set. */
Jim_Interp *goblin_jim_new(void)
{
    Jim_Interp *interp;
    Jim_Obj *names, *info;
    int i, n;

    Jim_Allocator = GoblinAlloc;
    interp = Jim_CreateInterp();

    Jim_RegisterCoreCommands(interp);
    Jim_Eval(interp, "info commands");
    names = Jim_GetResult(interp);
    Jim_IncrRefCount(names);
    n = Jim_ListLength(interp, names);
    for (i = 0; i < n; i++) {
        Jim_Obj *name = Jim_ListGetIndex(interp, names, i);
        if (!in(allowed, Jim_String(name))) {
            Jim_DeleteCommand(interp, name);
        }
    }
    Jim_DecrRefCount(interp, names);

    info = Jim_NewStringObj(interp, "info", -1);
    Jim_IncrRefCount(info);
    core_info = Jim_GetCommand(interp, info, JIM_NONE)->u.native.cmdProc;
    Jim_CreateCommand(interp, "info", InfoCommand, NULL, NULL);
    Jim_DecrRefCount(interp, info);

    Jim_Eval(interp, "unset -nocomplain ::tcl_interactive ::auto_path ::tcl_platform\n"
                     "set ::errorCode NONE; set ::errorInfo {}");
    Jim_SetEmptyResult(interp);
    return interp;
}
