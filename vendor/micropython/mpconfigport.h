/* Goblin Core's MicroPython configuration (the UPYTHON.EVAL engine). The embed port's generator
 * reads this file to list the qstrs and modules; build.rs compiles the generated tree with it.
 * See README.md in this directory. */

#include <port/mpconfigport_common.h>

#define MICROPY_CONFIG_ROM_LEVEL (MICROPY_CONFIG_ROM_LEVEL_BASIC_FEATURES)

#define MICROPY_ENABLE_COMPILER (1)
#define MICROPY_ENABLE_GC (1)
#define MICROPY_GC_SPLIT_HEAP (0)
/* The collector's mark stack, in blocks. At the default 64 a list of more than 64 objects (a
 * ZRANGE reply of a large sorted set) overflows it, and each overflow rescans the whole heap:
 * that was 30 % of a 1000-member rescore. 16384 entries (128 KiB, static) cover such replies. */
#define MICROPY_ALLOC_GC_STACK_SIZE (16384)
#define MICROPY_FLOAT_IMPL (MICROPY_FLOAT_IMPL_DOUBLE)
#define MICROPY_LONGINT_IMPL (MICROPY_LONGINT_IMPL_MPZ)
#define MICROPY_ERROR_REPORTING (MICROPY_ERROR_REPORTING_NORMAL)
#define MICROPY_ENABLE_SOURCE_LINE (1)
#define MICROPY_STACK_CHECK (1)
#define MICROPY_CPYTHON_COMPAT (1)
#define MICROPY_PY_BUILTINS_STR_UNICODE (1)
#define MICROPY_PY_BUILTINS_BYTES_HEX (1)
#define MICROPY_PY_BUILTINS_FROZENSET (1)
#define MICROPY_PY_BUILTINS_ROUND_INT (1)
#define MICROPY_PY_ALL_SPECIAL_METHODS (1)
#define MICROPY_PY_FUNCTION_ATTRS (1)
#define MICROPY_PY_BUILTINS_STR_OP_MODULO (1)
#define MICROPY_PY_COLLECTIONS (1)
#define MICROPY_PY_COLLECTIONS_ORDEREDDICT (1)
#define MICROPY_PY_MATH (1)
#define MICROPY_PY_MATH_SPECIAL_FUNCTIONS (1)
#define MICROPY_PY_CMATH (0)
#define MICROPY_PY_STRUCT (1)
#define MICROPY_PY_ARRAY (1)

/* Builtins can be overridden: `redis`, `__import__` (the allow-list) and `print` live in the
 * override dict, which the GC roots. */
#define MICROPY_CAN_OVERRIDE_BUILTINS (1)

/* The sandbox: nothing that reads files, stdin, or compiles code at run time. */
#define MICROPY_ENABLE_EXTERNAL_IMPORT (0)
#define MICROPY_PY_IO (0)
#define MICROPY_PY_OS (0)
#define MICROPY_PY_TIME (0)
#define MICROPY_PY_SYS (0)
#define MICROPY_PY_GC (0)
#define MICROPY_PY_MICROPYTHON (0)
#define MICROPY_PY_BUILTINS_EVAL_EXEC (0)
#define MICROPY_PY_BUILTINS_COMPILE (0)
#define MICROPY_PY_BUILTINS_INPUT (0)
#define MICROPY_PY_BUILTINS_HELP (0)
#define MICROPY_PY_THREAD (0)
#define MICROPY_PY_SYS_PLATFORM "goblin"

/* SCRIPT KILL and the busy check: the VM calls our hook every MICROPY_VM_HOOK_COUNT backward
 * jumps and returns (and at every one once a script is being killed, so the kill re-arms), and a
 * kill is delivered as a scheduled KeyboardInterrupt. */
#define MICROPY_KBD_EXCEPTION (1)
#define MICROPY_ENABLE_SCHEDULER (1)
extern int goblin_upy_killed;
void goblin_upy_vm_hook(void);
#define MICROPY_VM_HOOK_COUNT (1000)
#define MICROPY_VM_HOOK_INIT static unsigned int vm_hook_divisor = MICROPY_VM_HOOK_COUNT;
#define MICROPY_VM_HOOK_POLL if (goblin_upy_killed || --vm_hook_divisor == 0) { \
        vm_hook_divisor = MICROPY_VM_HOOK_COUNT; \
        goblin_upy_vm_hook(); \
}
#define MICROPY_VM_HOOK_LOOP MICROPY_VM_HOOK_POLL
#define MICROPY_VM_HOOK_RETURN MICROPY_VM_HOOK_POLL

/* Loops that run no bytecode (the iteration protocol under sum, max, list, any..., big-integer
 * multiplication, division and text conversion), and the lexer and the compiler (per token, per
 * node: compiling runs before the script, under a time limit of its own), count their steps with
 * GOBLIN_UPY_NATIVE_STEPS (our goblin.patch puts it there); the native hook asks the budget every
 * GOBLIN_UPY_NATIVE_EVERY steps and, once the script must stop, raises at the next step. Linear
 * searches that compiling repeats (constants, names) only count their work, with
 * GOBLIN_UPY_NATIVE_COUNT: some of their callers do not expect an exception. */
extern long goblin_upy_native_left;
void goblin_upy_native_hook(void);
#define GOBLIN_UPY_NATIVE_EVERY (1000)
#define GOBLIN_UPY_NATIVE_COUNT(n) (goblin_upy_native_left -= (long)(n))
#define GOBLIN_UPY_NATIVE_STEPS(n) do { \
        if (GOBLIN_UPY_NATIVE_COUNT(n) <= 0 || goblin_upy_killed) { \
            goblin_upy_native_hook(); \
        } \
} while (0)
