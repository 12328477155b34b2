/* Goblin Core's C glue for MicroPython (the UPYTHON.EVAL engine): everything that touches
 * MicroPython objects lives here, because MicroPython unwinds with nlr (setjmp/longjmp) and a
 * longjmp must never cross a Rust frame. Every entry point Rust calls catches its own nlr; every
 * call into Rust (the `goblin_upy_host_*` functions, the reply sink, the budget check) returns a
 * status, and this side raises.
 *
 * Entry points (the only global symbols of the linked object, see build.rs):
 * - goblin_upy_init / goblin_upy_deinit: one VM per process on a fixed GC heap (the memory limit).
 * - goblin_upy_compile: a body becomes `def __script(KEYS, ARGV):` with the body indented by one
 *   tab, compiled once; the function is kept in a rooted list, its index is the cache's artifact.
 * - goblin_upy_run: calls a compiled function with KEYS and ARGV (lists of bytes) and writes its
 *   result, or its exception, to the Rust reply sink through goblin_upy_out; or a function of a
 *   library (FCALL) with its keys and args.
 * - goblin_upy_load_library: runs a library's code (FUNCTION LOAD) as a module of its own, in a
 *   loading run where `redis.register_function` collects callbacks; keeps them, in order, as a
 *   list in a root slot.
 * - goblin_upy_build: what Rust calls while it walks a command's reply into Python values (each
 *   step protected, so an allocation failure is a status, not a longjmp through Rust).
 * - the port functions MicroPython expects (gc_collect, nlr_jump_fail, stdout), the VM hook and
 *   the native hook (goblin.patch), through which the budget check and SCRIPT KILL reach a script.
 *
 * GC roots: every object Rust refers to by index (compiled functions, the build stack, the
 * `redis` module, the script globals) hangs off `__main__`'s dict, which MicroPython roots. The
 * stack scan covers C and Rust frames from the current stack pointer up to the frame of the
 * outermost entry point (Rust frames above it hold no MicroPython object). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "py/builtin.h"
#include "py/compile.h"
#include "py/gc.h"
#include "py/lexer.h"
#include "py/mperrno.h"
#include "py/mphal.h"
#include "py/mpz.h"
#include "py/nlr.h"
#include "py/objint.h"
#include "py/objlist.h"
#include "py/objmodule.h"
#include "py/objstr.h"
#include "py/parse.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "shared/runtime/gchelper.h"

#define API __attribute__((visibility("default")))

/* How deep MicroPython may use the C stack below the outermost entry (the server runs on the main
 * thread's 8 MiB stack). */
#define STACK_LIMIT (1024 * 1024)

/* ---- Rust side ---- */
typedef struct {
  const uint8_t *p;
  size_t len;
  int kind; /* 0: bytes p/len, 1: integer i, 2: float d */
  int64_t i;
  double d;
  mp_obj_t keep; /* keeps a temporary alive on the (scanned) stack */
} goblin_arg_t;

typedef struct {
  const uint8_t *p;
  size_t len;
} goblin_bytes_t;

extern int goblin_upy_budget(int at_once);
extern int goblin_upy_host_call(const goblin_arg_t *args, size_t n, int raise);
extern void goblin_upy_host_log(int level, const uint8_t *p, size_t len);
extern void goblin_upy_host_setresp(int resp);
extern void goblin_upy_host_sha1hex(const uint8_t *p, size_t len, char *out40);
extern int goblin_upy_out(void *sink, int op, int64_t i, double d, const uint8_t *p, size_t len);
extern int64_t goblin_upy_host_flag(const uint8_t *p, size_t len);
extern int goblin_upy_host_register(const uint8_t *name, size_t name_len, const uint8_t *desc, size_t desc_len,
                                    int64_t flags, char *err, size_t *err_len);

/* Reply sink operations (goblin_upy_out); must match src/script/upython/mod.rs. */
enum {
  OUT_INT, OUT_FLOAT, OUT_BULK, OUT_NULL, OUT_BOOL, OUT_DOUBLE, OUT_ARRAY, OUT_MAP, OUT_SET,
  OUT_STATUS, OUT_ERROR, OUT_BIG, OUT_ENTER, OUT_LEAVE, OUT_UNSUPPORTED,
  OUT_RAISED_REDIS, OUT_RAISED, OUT_RAISED_MEMORY, OUT_FAILED,
};

/* Build operations (goblin_upy_build); must match src/script/upython/mod.rs. */
enum {
  B_INT, B_BYTES, B_STR, B_FLOAT, B_BOOL, B_NONE, B_BIG, B_LIST, B_DICT, B_SET, B_ITEM_LIST,
  B_ITEM_DICT, B_ITEM_SET, B_WRAP_OK, B_WRAP_ERR,
};

/* ---- State ---- */
static void *heap;
static size_t heap_size;
static mp_obj_t roots;          /* list: compiled functions by slot (None when free) */
static mp_obj_t build_stack;    /* list: values being built from a reply */
static mp_obj_t script_globals; /* dict: the globals every script runs with (emptied after a run) */
static mp_obj_t redis_error;    /* the redis.RedisError class */
static qstr q_ok, q_err, q_double, q_map, q_set, q_big_number, q_script, q_user_script, q_user_function;
static mp_obj_t loading_list;   /* list: the callbacks the loading run registered so far */
static int loading;             /* a library's loading run is on: register_function works */
static mp_obj_t build_failure;  /* the exception a failed build step caught */
int goblin_upy_killed;
/* Set while Rust runs a command for the script (goblin_upy_host_call): Rust holds the run then,
 * so the budget is not asked from the native loops or collections that building the reply runs. */
static int in_host;

static void set_stack_top(void *top) {
  mp_stack_set_top(top);
  mp_stack_set_limit(STACK_LIMIT);
}

static mp_obj_t main_dict(void) {
  return MP_OBJ_FROM_PTR(&MP_STATE_VM(dict_main));
}

static void keep(const char *name, mp_obj_t o) {
  mp_obj_dict_store(main_dict(), MP_OBJ_NEW_QSTR(qstr_from_str(name)), o);
}

/* ---- Port functions ---- */
void gc_collect(void) {
  gc_collect_start();
  gc_helper_collect_regs_and_stack();
  gc_collect_end();
  /* With the heap full, every allocation collects (a walk of the heap), so a script catching
   * MemoryError in a loop made a thousand collections between two VM hooks, minutes without a
   * budget check. A collection asks at once; it never raises (the allocator that collected does
   * not expect it): a kill is scheduled, and the VM raises it at its next jump. */
  if (!in_host) {
    if (!goblin_upy_killed && goblin_upy_budget(1)) goblin_upy_killed = 1;
    if (goblin_upy_killed) mp_sched_keyboard_interrupt();
  }
}

/* An exception escaped every handler: cannot happen (every entry point catches); abort rather
 * than loop forever as the embed port's version does. */
void nlr_jump_fail(void *val) {
  (void)val;
  abort();
}

/* Scripts have no stdout (print is replaced, see below); MicroPython's own diagnostics go nowhere. */
void mp_hal_stdout_tx_strn_cooked(const char *str, size_t len) {
  (void)str;
  (void)len;
}

/* The VM hook (mpconfigport.h): every MICROPY_VM_HOOK_COUNT jumps or returns, and at every one
 * once the script is being killed, so `except BaseException:` cannot swallow the kill. */
void goblin_upy_vm_hook(void) {
  if (!goblin_upy_killed && goblin_upy_budget(0)) goblin_upy_killed = 1;
  if (goblin_upy_killed) mp_sched_keyboard_interrupt();
}

/* The native hook (mpconfigport.h, goblin.patch): loops inside builtins and big-integer arithmetic
 * call it every GOBLIN_UPY_NATIVE_EVERY steps, and at every step once the script is being killed.
 * No VM instruction runs until such a loop ends, so the kill is raised here, at once. */
long goblin_upy_native_left = GOBLIN_UPY_NATIVE_EVERY;

void goblin_upy_native_hook(void) {
  goblin_upy_native_left = GOBLIN_UPY_NATIVE_EVERY;
  if (in_host) return;
  goblin_upy_vm_hook();
  if (goblin_upy_killed) nlr_raise(MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_kbd_exception)));
}

/* ---- Helpers ---- */

/* A printer into a fixed buffer (no allocation: usable when the heap is full). */
typedef struct {
  char buf[512];
  size_t len;
} fixed_buf_t;

static void fixed_strn(void *env, const char *str, size_t len) {
  fixed_buf_t *b = env;
  size_t room = sizeof(b->buf) - b->len;
  if (len > room) len = room;
  memcpy(b->buf + b->len, str, len);
  b->len += len;
}

/* The line of the innermost `user_script` or `user_function` frame of an exception's traceback,
 * or 0: a script's in the body's own numbering (the `def` line is not counted), a library's as
 * its source's (the shebang line is line 1). */
static int64_t exception_line(mp_obj_t exc) {
  size_t n, *values;
  mp_obj_exception_get_traceback(exc, &n, &values);
  for (size_t i = 0; i + 2 < n; i += 3) {
    if (values[i] == q_user_script) return values[i + 1] > 1 ? (int64_t)values[i + 1] - 1 : 1;
    if (values[i] == q_user_function) return (int64_t)values[i + 1];
  }
  return 0;
}

/* Writes `Type: message` (or just the message with `message_only`) into b, protected. */
static void describe_exception(fixed_buf_t *b, mp_obj_t exc, int message_only) {
  mp_print_t print = {b, fixed_strn};
  nlr_buf_t nlr;
  if (nlr_push(&nlr) == 0) {
    if (message_only) {
      mp_obj_t v = mp_obj_exception_get_value(exc);
      if (v != mp_const_none) mp_obj_print_helper(&print, v, PRINT_STR);
    } else {
      mp_obj_print_helper(&print, exc, PRINT_EXC);
    }
    nlr_pop();
  } else {
    b->len = 0;
    mp_print_str(&print, qstr_str(mp_obj_get_type(exc)->name));
  }
}

static mp_obj_t new_bytes_list(const goblin_bytes_t *items, size_t n) {
  mp_obj_list_t *l = MP_OBJ_TO_PTR(mp_obj_new_list(n, NULL));
  for (size_t i = 0; i < n; i++) l->items[i] = mp_obj_new_bytes(items[i].p, items[i].len);
  return MP_OBJ_FROM_PTR(l);
}

/* The bytes of a str, bytes or bytearray; false for anything else. */
static bool get_bytes(mp_obj_t o, const uint8_t **p, size_t *len) {
  if (mp_obj_is_str_or_bytes(o)) {
    *p = (const uint8_t *)mp_obj_str_get_data(o, len);
    return true;
  }
  mp_buffer_info_t info;
  if (mp_obj_is_type(o, &mp_type_bytearray) && mp_get_buffer(o, &info, MP_BUFFER_READ)) {
    *p = info.buf;
    *len = info.len;
    return true;
  }
  return false;
}

/* An int's value when it fits 64 bits (without raising, unlike mp_obj_get_int_maybe); false for a
 * bigger int or anything else. */
static bool int_fits(mp_obj_t o, mp_int_t *v) {
  if (mp_obj_is_small_int(o)) {
    *v = MP_OBJ_SMALL_INT_VALUE(o);
    return true;
  }
  if (!mp_obj_is_exact_type(o, &mp_type_int)) return false;
  return mpz_as_int_checked(&((mp_obj_int_t *)MP_OBJ_TO_PTR(o))->mpz, v);
}

static mp_obj_t wrap(qstr key, mp_obj_t v) {
  mp_obj_t d = mp_obj_new_dict(1);
  mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(key), v);
  return d;
}

/* ---- The redis module ---- */

static mp_obj_t build_pop(void) {
  mp_obj_list_t *s = MP_OBJ_TO_PTR(build_stack);
  mp_obj_t v = s->items[--s->len];
  s->items[s->len] = MP_OBJ_NULL;
  return v;
}

static mp_obj_t build_top(void) {
  mp_obj_list_t *s = MP_OBJ_TO_PTR(build_stack);
  return s->items[s->len - 1];
}

static void build_clear(void) {
  mp_obj_list_t *s = MP_OBJ_TO_PTR(build_stack);
  while (s->len) s->items[--s->len] = MP_OBJ_NULL;
}

/* Raises redis.RedisError with `text` (an error reply's text, code first). */
static NORETURN void raise_redis(const char *text) {
  nlr_raise(mp_call_function_1(redis_error, mp_obj_new_str(text, strlen(text))));
}

/* One step of building a Python value from a reply; 0, or -1 when it raised (the exception is
 * kept for the caller to raise once Rust has returned). */
API int goblin_upy_build(int op, int64_t i, double d, const uint8_t *p, size_t len) {
  if (build_failure != MP_OBJ_NULL) return -1;
  nlr_buf_t nlr;
  if (nlr_push(&nlr) != 0) {
    build_failure = MP_OBJ_FROM_PTR(nlr.ret_val);
    return -1;
  }
  mp_obj_t v = MP_OBJ_NULL;
  switch (op) {
    case B_INT: v = mp_obj_new_int_from_ll(i); break;
    case B_BYTES: v = mp_obj_new_bytes(p, len); break;
    case B_STR: v = mp_obj_new_str((const char *)p, len); break;
    case B_FLOAT: v = mp_obj_new_float(d); break;
    case B_BOOL: v = mp_obj_new_bool(i); break;
    case B_NONE: v = mp_const_none; break;
    case B_BIG: {
      const char *s = (const char *)p;
      bool neg = len > 0 && *s == '-';
      if (neg) s++;
      v = mp_obj_new_int_from_str_len(&s, len - neg, neg, 10);
      break;
    }
    case B_LIST: v = mp_obj_new_list(0, NULL); break;
    case B_DICT: v = mp_obj_new_dict(0); break;
    case B_SET: v = mp_obj_new_set(0, NULL); break;
    case B_ITEM_LIST: {
      mp_obj_t item = build_pop();
      mp_obj_list_append(build_top(), item);
      break;
    }
    case B_ITEM_DICT: {
      mp_obj_t value = build_pop();
      mp_obj_t key = build_pop();
      mp_obj_dict_store(build_top(), key, value);
      break;
    }
    case B_ITEM_SET: {
      mp_obj_t item = build_pop();
      mp_obj_set_store(build_top(), item);
      break;
    }
    case B_WRAP_OK: v = wrap(q_ok, build_pop()); break;
    case B_WRAP_ERR: v = wrap(q_err, build_pop()); break;
  }
  if (v != MP_OBJ_NULL) mp_obj_list_append(build_stack, v);
  nlr_pop();
  return 0;
}

/* redis.call / redis.pcall: the arguments as byte strings (numbers as text, formatted by Rust),
 * the command run by Rust, its reply built onto the build stack. */
static mp_obj_t do_call(size_t n_args, const mp_obj_t *args, int raise) {
  goblin_arg_t *a = alloca(n_args * sizeof(goblin_arg_t));
  for (size_t k = 0; k < n_args; k++) {
    mp_obj_t o = args[k];
    a[k].kind = 0;
    a[k].keep = MP_OBJ_NULL;
    if (get_bytes(o, &a[k].p, &a[k].len)) continue;
    if (mp_obj_is_int(o) && !mp_obj_is_bool(o)) {
      mp_int_t v;
      if (int_fits(o, &v)) {
        a[k].kind = 1;
        a[k].i = v;
      } else {
        a[k].keep = mp_obj_str_make_new(&mp_type_str, 1, 0, &o);
        a[k].p = (const uint8_t *)mp_obj_str_get_data(a[k].keep, &a[k].len);
      }
      continue;
    }
    if (mp_obj_is_float(o)) {
      a[k].kind = 2;
      a[k].d = mp_obj_get_float(o);
      continue;
    }
    mp_raise_TypeError(MP_ERROR_TEXT("redis.call arguments must be bytes, str, int or float"));
  }
  build_failure = MP_OBJ_NULL;
  in_host = 1;
  int st = goblin_upy_host_call(a, n_args, raise);
  in_host = 0;
  if (st == 3) raise_redis("ERR redis.call is only available while a script runs");
  if (st == 2 || build_failure != MP_OBJ_NULL) {
    mp_obj_t exc = build_failure != MP_OBJ_NULL ? build_failure : mp_obj_new_exception(&mp_type_MemoryError);
    build_failure = MP_OBJ_NULL;
    build_clear();
    nlr_raise(exc);
  }
  mp_obj_t v = build_pop();
  if (st == 1) nlr_raise(mp_call_function_1(redis_error, v));
  return v;
}

static mp_obj_t redis_call(size_t n_args, const mp_obj_t *args) {
  return do_call(n_args, args, 1);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR(redis_call_obj, 1, redis_call);

static mp_obj_t redis_pcall(size_t n_args, const mp_obj_t *args) {
  return do_call(n_args, args, 0);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR(redis_pcall_obj, 1, redis_pcall);

/* `{'err': text}`, with `ERR ` in front of a text without a space (as Redis's Lua). */
static mp_obj_t redis_error_reply(mp_obj_t text) {
  size_t len;
  const char *s;
  if (!mp_obj_is_str_or_bytes(text)) mp_raise_TypeError(MP_ERROR_TEXT("redis.error_reply expects str or bytes"));
  s = mp_obj_str_get_data(text, &len);
  if (len && *s == '-') {
    s++;
    len--;
  }
  mp_obj_t v;
  if (memchr(s, ' ', len) == NULL) {
    vstr_t vstr;
    vstr_init(&vstr, len + 4);
    vstr_add_strn(&vstr, "ERR ", 4);
    vstr_add_strn(&vstr, s, len);
    v = mp_obj_new_str_from_vstr(&vstr);
  } else {
    v = mp_obj_new_str(s, len);
  }
  return wrap(q_err, v);
}
static MP_DEFINE_CONST_FUN_OBJ_1(redis_error_reply_obj, redis_error_reply);

static mp_obj_t redis_status_reply(mp_obj_t text) {
  if (!mp_obj_is_str_or_bytes(text)) mp_raise_TypeError(MP_ERROR_TEXT("redis.status_reply expects str or bytes"));
  size_t len;
  const char *s = mp_obj_str_get_data(text, &len);
  return wrap(q_ok, mp_obj_new_str(s, len));
}
static MP_DEFINE_CONST_FUN_OBJ_1(redis_status_reply_obj, redis_status_reply);

static mp_obj_t redis_sha1hex(mp_obj_t data) {
  const uint8_t *p;
  size_t len;
  if (!get_bytes(data, &p, &len)) mp_raise_TypeError(MP_ERROR_TEXT("redis.sha1hex expects str or bytes"));
  char out[40];
  goblin_upy_host_sha1hex(p, len, out);
  return mp_obj_new_str(out, 40);
}
static MP_DEFINE_CONST_FUN_OBJ_1(redis_sha1hex_obj, redis_sha1hex);

static mp_obj_t redis_log(size_t n_args, const mp_obj_t *args) {
  mp_int_t level;
  if (!int_fits(args[0], &level) || level < 0 || level > 3) {
    mp_raise_ValueError(MP_ERROR_TEXT("redis.log level must be LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE or LOG_WARNING"));
  }
  vstr_t vstr;
  vstr_init(&vstr, 64);
  mp_print_t print;
  vstr_init_print(&vstr, 64, &print);
  for (size_t k = 1; k < n_args; k++) {
    if (k > 1) vstr_add_byte(&vstr, ' ');
    const uint8_t *p;
    size_t len;
    if (get_bytes(args[k], &p, &len)) vstr_add_strn(&vstr, (const char *)p, len);
    else mp_obj_print_helper(&print, args[k], PRINT_STR);
  }
  goblin_upy_host_log((int)level, (const uint8_t *)vstr.buf, vstr.len);
  vstr_clear(&vstr);
  return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR(redis_log_obj, 2, redis_log);

static mp_obj_t redis_setresp(mp_obj_t v) {
  mp_int_t n;
  if (!int_fits(v, &n) || (n != 2 && n != 3)) mp_raise_ValueError(MP_ERROR_TEXT("RESP version must be 2 or 3"));
  goblin_upy_host_setresp((int)n);
  return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(redis_setresp_obj, redis_setresp);

/* redis.register_function(name, callback), redis.register_function(function_name=...,
 * callback=..., flags=[...], description=...) or the same as one dict: only in a loading run.
 * Errors as Redis's Lua `register_function` (as RedisError); Rust checks the flags' and the
 * function's names and keeps what was registered, this side the callback. */
/* Any case, as Redis's Lua reads the table's keys. */
static bool key_is(mp_obj_t key, const char *name) {
  size_t len;
  const char *s = mp_obj_str_get_data(key, &len);
  return len == strlen(name) && strncasecmp(s, name, len) == 0;
}

static mp_obj_t redis_register_function(size_t n_args, const mp_obj_t *args, mp_map_t *kw) {
  if (!loading) raise_redis("ERR redis.register_function can only be called on FUNCTION LOAD command");
  mp_obj_t name = MP_OBJ_NULL, desc = MP_OBJ_NULL, callback = MP_OBJ_NULL, flags = MP_OBJ_NULL;
  const uint8_t *name_p = NULL, *desc_p = NULL;
  size_t name_len = 0, desc_len = 0;
  if (n_args == 2 && kw->used == 0) {
    if (!get_bytes(args[0], &name_p, &name_len)) raise_redis("ERR first argument to redis.register_function must be a string");
    if (!mp_obj_is_callable(args[1])) raise_redis("ERR second argument to redis.register_function must be a function");
    name = args[0];
    callback = args[1];
  } else {
    mp_map_t *named = kw;
    if (n_args == 1 && kw->used == 0) {
      if (!mp_obj_is_type(args[0], &mp_type_dict)) {
        raise_redis("ERR calling redis.register_function with a single argument is only applicable to a dict (representing named arguments).");
      }
      named = &((mp_obj_dict_t *)MP_OBJ_TO_PTR(args[0]))->map;
    } else if (n_args != 0 || kw->used == 0) {
      raise_redis("ERR wrong number of arguments to redis.register_function");
    }
    for (size_t k = 0; k < named->alloc; k++) {
      if (!mp_map_slot_is_filled(named, k)) continue;
      mp_obj_t key = named->table[k].key, value = named->table[k].value;
      if (!mp_obj_is_str(key)) raise_redis("ERR named argument key given to redis.register_function is not a string");
      if (key_is(key, "function_name")) name = value;
      else if (key_is(key, "description")) desc = value;
      else if (key_is(key, "callback")) callback = value;
      else if (key_is(key, "flags")) flags = value;
      else raise_redis("ERR unknown argument given to redis.register_function");
    }
    /* None is an argument not given, as Python's defaults go. */
    if (name == mp_const_none) name = MP_OBJ_NULL;
    if (desc == mp_const_none) desc = MP_OBJ_NULL;
    if (callback == mp_const_none) callback = MP_OBJ_NULL;
    if (flags == mp_const_none) flags = MP_OBJ_NULL;
    if (name != MP_OBJ_NULL && !get_bytes(name, &name_p, &name_len)) {
      raise_redis("ERR function_name argument given to redis.register_function must be a string");
    }
    if (desc != MP_OBJ_NULL && !get_bytes(desc, &desc_p, &desc_len)) {
      raise_redis("ERR description argument given to redis.register_function must be a string");
    }
  }
  int64_t bits = 0;
  if (flags != MP_OBJ_NULL) {
    size_t n;
    mp_obj_t *items;
    if (mp_obj_is_type(flags, &mp_type_list)) mp_obj_list_get(flags, &n, &items);
    else if (mp_obj_is_type(flags, &mp_type_tuple)) mp_obj_tuple_get(flags, &n, &items);
    else raise_redis("ERR flags argument to redis.register_function must be a list representing function flags");
    for (size_t k = 0; k < n; k++) {
      const uint8_t *p;
      size_t len;
      int64_t bit = get_bytes(items[k], &p, &len) ? goblin_upy_host_flag(p, len) : -1;
      if (bit < 0) raise_redis("ERR unknown flag given");
      bits |= bit;
    }
  }
  if (callback != MP_OBJ_NULL && !mp_obj_is_callable(callback)) {
    raise_redis("ERR callback argument given to redis.register_function must be a function");
  }
  if (name == MP_OBJ_NULL) raise_redis("ERR redis.register_function must get a function name argument");
  if (callback == MP_OBJ_NULL) raise_redis("ERR redis.register_function must get a callback argument");
  /* The callback is kept first (this may raise MemoryError), dropped again if Rust refuses. */
  mp_obj_list_append(loading_list, callback);
  char err[256];
  size_t err_len = 0;
  if (goblin_upy_host_register(name_p, name_len, desc_p, desc_len, bits, err, &err_len) != 0) {
    mp_obj_list_t *l = MP_OBJ_TO_PTR(loading_list);
    l->items[--l->len] = MP_OBJ_NULL;
    nlr_raise(mp_call_function_1(redis_error, mp_obj_new_str(err, err_len)));
  }
  return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_KW(redis_register_function_obj, 0, redis_register_function);

/* ---- The sandbox: the import allow-list and print ---- */

static const char *const allowed_modules[] = {"math", "collections", "struct", "array", NULL};

static mp_obj_t sandbox_import(size_t n_args, const mp_obj_t *args) {
  const char *name = mp_obj_str_get_str(args[0]);
  if (strcmp(name, "redis") == 0) return mp_load_global(qstr_from_str("redis"));
  for (const char *const *m = allowed_modules; *m; m++) {
    if (strcmp(name, *m) == 0) return mp_builtin___import__(n_args, args);
  }
  mp_raise_msg_varg(&mp_type_ImportError,
                    MP_ERROR_TEXT("import of '%s' is not allowed (allowed: math, collections, struct, array, redis)"), name);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(sandbox_import_obj, 1, 5, sandbox_import);

static mp_obj_t sandbox_print(size_t n_args, const mp_obj_t *args, mp_map_t *kw) {
  (void)n_args;
  (void)args;
  (void)kw;
  mp_raise_msg(&mp_type_RuntimeError, MP_ERROR_TEXT("print is not available to scripts (use redis.log)"));
}
static MP_DEFINE_CONST_FUN_OBJ_KW(sandbox_print_obj, 0, sandbox_print);

/* ---- Compiling ---- */

/* Compiles and runs Python source at module level with `globals`. */
static void exec_source(const char *src, size_t len, qstr name, mp_obj_t globals) {
  mp_obj_dict_t *old_globals = mp_globals_get(), *old_locals = mp_locals_get();
  mp_globals_set(MP_OBJ_TO_PTR(globals));
  mp_locals_set(MP_OBJ_TO_PTR(globals));
  mp_lexer_t *lex = mp_lexer_new_from_str_len(name, src, len, 0);
  mp_parse_tree_t tree = mp_parse(lex, MP_PARSE_FILE_INPUT);
  mp_obj_t module_fun = mp_compile(&tree, name, false);
  mp_call_function_0(module_fun);
  mp_globals_set(old_globals);
  mp_locals_set(old_locals);
}

static void setup(const char *version, size_t version_len, int64_t version_num) {
  q_ok = qstr_from_str("ok");
  q_err = qstr_from_str("err");
  q_double = qstr_from_str("double");
  q_map = qstr_from_str("map");
  q_set = qstr_from_str("set");
  q_big_number = qstr_from_str("big_number");
  q_script = qstr_from_str("__script");
  q_user_script = qstr_from_str("user_script");
  q_user_function = qstr_from_str("user_function");
  loading_list = mp_obj_new_list(0, NULL);
  keep("__goblin_loading", loading_list);
  roots = mp_obj_new_list(0, NULL);
  keep("__goblin_roots", roots);
  build_stack = mp_obj_new_list(0, NULL);
  keep("__goblin_build", build_stack);
  script_globals = mp_obj_new_dict(0);
  keep("__goblin_globals", script_globals);

  mp_obj_t prelude = mp_obj_new_dict(0);
  keep("__goblin_prelude", prelude);
  static const char src[] =
      "class RedisError(Exception):\n"
      "    pass\n";
  exec_source(src, sizeof(src) - 1, qstr_from_str("redis"), prelude);
  redis_error = mp_obj_dict_get(prelude, MP_OBJ_NEW_QSTR(qstr_from_str("RedisError")));
  /* The class is shared by every script and library: an attribute one of them set on it (a
   * replaced __init__) would run in the others' errors. */
  MP_OBJ_TYPE_GET_SLOT((mp_obj_type_t *)MP_OBJ_TO_PTR(redis_error), locals_dict)->map.is_fixed = 1;

  mp_obj_t redis = mp_obj_new_module(qstr_from_str("redis"));
  keep("__goblin_redis", redis);
  mp_obj_dict_t *g = mp_obj_module_get_globals(redis);
  mp_obj_t d = MP_OBJ_FROM_PTR(g);
  static const struct {
    const char *name;
    const mp_obj_base_t *fun;
  } funs[] = {
      {"call", &redis_call_obj.base},
      {"pcall", &redis_pcall_obj.base},
      {"error_reply", &redis_error_reply_obj.base},
      {"status_reply", &redis_status_reply_obj.base},
      {"sha1hex", &redis_sha1hex_obj.base},
      {"log", &redis_log_obj.base},
      {"setresp", &redis_setresp_obj.base},
      {"register_function", &redis_register_function_obj.base},
  };
  for (size_t k = 0; k < sizeof(funs) / sizeof(funs[0]); k++) {
    mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(qstr_from_str(funs[k].name)), MP_OBJ_FROM_PTR(funs[k].fun));
  }
  static const char *const levels[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"};
  for (int k = 0; k < 4; k++) mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(qstr_from_str(levels[k])), MP_OBJ_NEW_SMALL_INT(k));
  mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(qstr_from_str("RedisError")), redis_error);
  mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(qstr_from_str("REDIS_VERSION")), mp_obj_new_str(version, version_len));
  mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(qstr_from_str("REDIS_VERSION_NUM")), mp_obj_new_int_from_ll(version_num));
  /* Read-only from here: `redis.call = None` is an AttributeError. */
  g->map.is_fixed = 1;

  mp_obj_t builtins = mp_obj_new_dict(4);
  MP_STATE_VM(mp_module_builtins_override_dict) = MP_OBJ_TO_PTR(builtins);
  mp_obj_dict_store(builtins, MP_OBJ_NEW_QSTR(qstr_from_str("redis")), redis);
  mp_obj_dict_store(builtins, MP_OBJ_NEW_QSTR(MP_QSTR___import__), MP_OBJ_FROM_PTR(&sandbox_import_obj));
  mp_obj_dict_store(builtins, MP_OBJ_NEW_QSTR(MP_QSTR_print), MP_OBJ_FROM_PTR(&sandbox_print_obj));
  ((mp_obj_dict_t *)MP_OBJ_TO_PTR(builtins))->map.is_fixed = 1;
}

API void goblin_upy_deinit(void) {
  if (!heap) return;
  mp_deinit();
  free(heap);
  heap = NULL;
}

/* Starts the VM on a fresh heap of `size` bytes; 0, or -1 (no memory for the heap or set-up). */
API int goblin_upy_init(size_t size, const char *version, size_t version_len, int64_t version_num) {
  set_stack_top(__builtin_frame_address(0));
  heap = calloc(1, size);
  if (!heap) return -1;
  heap_size = size;
  gc_init(heap, (char *)heap + size);
  mp_init();
  /* Collect every quarter of the heap (at most 4 MiB) allocated, rather than only when it is full,
   * so a big heap is neither swept nor touched in full between collections. */
  size_t every = size / 4 < (4u << 20) ? size / 4 : (4u << 20);
  MP_STATE_MEM(gc_alloc_threshold) = every / MICROPY_BYTES_PER_GC_BLOCK;
  nlr_buf_t nlr;
  if (nlr_push(&nlr) == 0) {
    setup(version, version_len, version_num);
    nlr_pop();
    return 0;
  }
  {
    fixed_buf_t b = {.len = 0};
    describe_exception(&b, MP_OBJ_FROM_PTR(nlr.ret_val), 0);
    fprintf(stderr, "MicroPython set-up failed: %.*s\n", (int)b.len, b.buf);
  }
  goblin_upy_deinit();
  return -1;
}

/* An upper bound of the heap bytes in use — up to the highest block allocated, which a collection
 * brings down to the highest live one; O(1), unlike gc_info, which reads the whole allocation
 * table — after a collection with `collect`, and the heap's size. */
API void goblin_upy_memory(int collect, size_t *used, size_t *total) {
  if (collect) {
    set_stack_top(__builtin_frame_address(0));
    gc_collect();
  }
  *used = (MP_STATE_MEM(area).gc_last_used_block + 1) * MICROPY_BYTES_PER_GC_BLOCK;
  *total = heap_size;
}

/* Keeps `o` in a free slot of the roots (may raise MemoryError); its slot. */
static long store_root(mp_obj_t o) {
  mp_obj_list_t *r = MP_OBJ_TO_PTR(roots);
  for (size_t k = 0; k < r->len; k++) {
    if (r->items[k] == mp_const_none) {
      r->items[k] = o;
      return (long)k;
    }
  }
  mp_obj_list_append(roots, o);
  return (long)r->len - 1;
}

/* An exception as the error Rust reports: its text into err (`Type: message`, or only the
 * message with `message_only`) and its line. */
static void report_exception(mp_obj_t exc, int message_only, char *err, size_t *err_len, int64_t *line) {
  fixed_buf_t b = {.len = 0};
  describe_exception(&b, exc, message_only);
  memcpy(err, b.buf, b.len);
  *err_len = b.len;
  *line = exception_line(exc);
}

/* Compiles `src` (the body already wrapped as `def __script(KEYS, ARGV):` by Rust) and keeps the
 * function in a free slot of the roots; returns the slot, or -1 with the error (`Type: message`)
 * in err and its line in *line. */
API long goblin_upy_compile(const char *src, size_t len, char *err, size_t *err_len, int64_t *line) {
  set_stack_top(__builtin_frame_address(0));
  goblin_upy_killed = 0;
  long slot = -1;
  nlr_buf_t nlr;
  if (nlr_push(&nlr) == 0) {
    exec_source(src, len, q_user_script, script_globals);
    mp_obj_t fun = mp_obj_dict_get(script_globals, MP_OBJ_NEW_QSTR(q_script));
    mp_obj_dict_t *g = MP_OBJ_TO_PTR(script_globals);
    mp_map_clear(&g->map);
    slot = store_root(fun);
    nlr_pop();
  } else {
    mp_map_clear(&((mp_obj_dict_t *)MP_OBJ_TO_PTR(script_globals))->map);
    report_exception(MP_OBJ_FROM_PTR(nlr.ret_val), 0, err, err_len, line);
  }
  /* Compiling past its time is stopped as a kill is (Rust knows why): nothing of it stays. */
  goblin_upy_killed = 0;
  MP_STATE_THREAD(mp_pending_exception) = MP_OBJ_NULL;
  MP_STATE_VM(sched_state) = MP_SCHED_IDLE;
  mp_obj_exception_clear_traceback(MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_kbd_exception)));
  return slot;
}

/* How a library failed to load (goblin_upy_load_library's *kind). */
enum { LOAD_COMPILE, LOAD_RAISED_REDIS, LOAD_RAISED, LOAD_MEMORY };

static int load_failure(mp_obj_t exc, int compiling) {
  mp_obj_t type = MP_OBJ_FROM_PTR(mp_obj_get_type(exc));
  if (mp_obj_is_subclass_fast(type, MP_OBJ_FROM_PTR(&mp_type_MemoryError))) return LOAD_MEMORY;
  if (compiling) return LOAD_COMPILE;
  return mp_obj_is_subclass_fast(type, redis_error) ? LOAD_RAISED_REDIS : LOAD_RAISED;
}

/* Runs a library's code (named `user_function`) as a module with globals of its own, in a loading
 * run: the callbacks it registers are kept, in order, as a list in a free slot of the roots, which
 * is returned. On error -1, with *kind (LOAD_*), the text (a RedisError's message only) and line. */
API long goblin_upy_load_library(const char *src, size_t len, int *kind, char *err, size_t *err_len, int64_t *line) {
  set_stack_top(__builtin_frame_address(0));
  goblin_upy_killed = 0;
  mp_obj_dict_t *old_globals = mp_globals_get(), *old_locals = mp_locals_get();
  mp_obj_t fun = MP_OBJ_NULL, exc = MP_OBJ_NULL;
  /* Set between nlr_push and a raise: volatile, so they hold their values after the longjmp. */
  volatile int compiling = 1;
  volatile long slot = -1;
  nlr_buf_t nlr;
  if (nlr_push(&nlr) == 0) {
    mp_obj_t globals = mp_obj_new_dict(0);
    mp_globals_set(MP_OBJ_TO_PTR(globals));
    mp_locals_set(MP_OBJ_TO_PTR(globals));
    mp_lexer_t *lex = mp_lexer_new_from_str_len(q_user_function, src, len, 0);
    mp_parse_tree_t tree = mp_parse(lex, MP_PARSE_FILE_INPUT);
    fun = mp_compile(&tree, q_user_function, false);
    compiling = 0;
    loading = 1;
    mp_call_function_0(fun);
    loading = 0;
    mp_obj_list_t *l = MP_OBJ_TO_PTR(loading_list);
    slot = store_root(mp_obj_new_list(l->len, l->items));
    nlr_pop();
  } else {
    exc = MP_OBJ_FROM_PTR(nlr.ret_val);
  }
  loading = 0;
  mp_globals_set(old_globals);
  mp_locals_set(old_locals);
  MP_STATE_THREAD(mp_pending_exception) = MP_OBJ_NULL;
  MP_STATE_VM(sched_state) = MP_SCHED_IDLE;
  goblin_upy_killed = 0;
  mp_obj_list_t *l = MP_OBJ_TO_PTR(loading_list);
  while (l->len) l->items[--l->len] = MP_OBJ_NULL;
  if (exc != MP_OBJ_NULL) {
    *kind = load_failure(exc, compiling);
    report_exception(exc, *kind == LOAD_RAISED_REDIS, err, err_len, line);
    mp_obj_exception_clear_traceback(MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_kbd_exception)));
  }
  return slot;
}

API void goblin_upy_release(long slot) {
  mp_obj_list_t *r = MP_OBJ_TO_PTR(roots);
  if (slot >= 0 && (size_t)slot < r->len) r->items[slot] = mp_const_none;
}

/* ---- Replies ---- */

static bool lookup(mp_obj_t dict, qstr key, mp_obj_t *out) {
  mp_map_elem_t *e = mp_map_lookup(&((mp_obj_dict_t *)MP_OBJ_TO_PTR(dict))->map, MP_OBJ_NEW_QSTR(key), MP_MAP_LOOKUP);
  if (!e) return false;
  *out = e->value;
  return true;
}

static int out(void *sink, int op, int64_t i, double d, const uint8_t *p, size_t len) {
  return goblin_upy_out(sink, op, i, d, p, len);
}

static void reply_value(void *sink, mp_obj_t v);

static void reply_items(void *sink, int op, size_t n, mp_obj_t *items) {
  if (!out(sink, OUT_ENTER, 0, 0, NULL, 0)) return;
  out(sink, op, (int64_t)n, 0, NULL, 0);
  for (size_t k = 0; k < n; k++) reply_value(sink, items[k]);
  out(sink, OUT_LEAVE, 0, 0, NULL, 0);
}

static void reply_map(void *sink, mp_obj_t dict, int op) {
  mp_map_t *map = &((mp_obj_dict_t *)MP_OBJ_TO_PTR(dict))->map;
  if (!out(sink, OUT_ENTER, 0, 0, NULL, 0)) return;
  out(sink, op, (int64_t)map->used, 0, NULL, 0);
  for (size_t k = 0; k < map->alloc; k++) {
    if (!mp_map_slot_is_filled(map, k)) continue;
    reply_value(sink, map->table[k].key);
    if (op == OUT_MAP) reply_value(sink, map->table[k].value);
  }
  out(sink, OUT_LEAVE, 0, 0, NULL, 0);
}

static void reply_set(void *sink, mp_obj_t set) {
  if (!out(sink, OUT_ENTER, 0, 0, NULL, 0)) return;
  out(sink, OUT_SET, MP_OBJ_SMALL_INT_VALUE(mp_obj_len(set)), 0, NULL, 0);
  /* Iterating a set neither allocates (the iterator lives in iter_buf) nor raises. */
  mp_obj_iter_buf_t iter_buf;
  mp_obj_t it = mp_getiter(set, &iter_buf), item;
  while ((item = mp_iternext(it)) != MP_OBJ_STOP_ITERATION) reply_value(sink, item);
  out(sink, OUT_LEAVE, 0, 0, NULL, 0);
}

static void reply_text(void *sink, int op, mp_obj_t v) {
  const uint8_t *p;
  size_t len;
  if (get_bytes(v, &p, &len)) out(sink, op, 0, 0, p, len);
  else out(sink, OUT_UNSUPPORTED, 0, 0, (const uint8_t *)"a non-string reply text", 23);
}

/* The big integer's decimal digits (allocates: protected). */
static void reply_big(void *sink, mp_obj_t v) {
  nlr_buf_t nlr;
  if (nlr_push(&nlr) == 0) {
    mp_obj_t s = mp_obj_str_make_new(&mp_type_str, 1, 0, &v);
    size_t len;
    const char *p = mp_obj_str_get_data(s, &len);
    nlr_pop();
    out(sink, OUT_BIG, 0, 0, (const uint8_t *)p, len);
  } else {
    out(sink, OUT_RAISED_MEMORY, 0, 0, NULL, 0);
  }
}

static void reply_dict(void *sink, mp_obj_t v) {
  mp_obj_t f;
  if (lookup(v, q_err, &f)) return reply_text(sink, OUT_ERROR, f);
  if (lookup(v, q_ok, &f)) return reply_text(sink, OUT_STATUS, f);
  if (lookup(v, q_double, &f) && (mp_obj_is_float(f) || mp_obj_is_int(f))) {
    out(sink, OUT_DOUBLE, 0, mp_obj_get_float(f), NULL, 0);
    return;
  }
  if (lookup(v, q_big_number, &f)) return reply_text(sink, OUT_BIG, f);
  if (lookup(v, q_map, &f) && mp_obj_is_type(f, &mp_type_dict)) return reply_map(sink, f, OUT_MAP);
  if (lookup(v, q_set, &f)) {
    if (mp_obj_is_type(f, &mp_type_dict)) return reply_map(sink, f, OUT_SET);
    if (mp_obj_is_type(f, &mp_type_set) || mp_obj_is_type(f, &mp_type_frozenset)) return reply_set(sink, f);
  }
  reply_map(sink, v, OUT_MAP);
}

static void reply_value(void *sink, mp_obj_t v) {
  const uint8_t *p;
  size_t len;
  if (v == mp_const_none) {
    out(sink, OUT_NULL, 0, 0, NULL, 0);
  } else if (mp_obj_is_bool(v)) {
    out(sink, OUT_BOOL, v == mp_const_true, 0, NULL, 0);
  } else if (mp_obj_is_int(v)) {
    mp_int_t n;
    if (int_fits(v, &n)) out(sink, OUT_INT, n, 0, NULL, 0);
    else reply_big(sink, v);
  } else if (mp_obj_is_float(v)) {
    out(sink, OUT_FLOAT, 0, mp_obj_get_float(v), NULL, 0);
  } else if (get_bytes(v, &p, &len)) {
    out(sink, OUT_BULK, 0, 0, p, len);
  } else if (mp_obj_is_type(v, &mp_type_list)) {
    mp_obj_list_t *l = MP_OBJ_TO_PTR(v);
    reply_items(sink, OUT_ARRAY, l->len, l->items);
  } else if (mp_obj_is_type(v, &mp_type_tuple)) {
    mp_obj_tuple_t *t = MP_OBJ_TO_PTR(v);
    reply_items(sink, OUT_ARRAY, t->len, t->items);
  } else if (mp_obj_is_type(v, &mp_type_dict)) {
    reply_dict(sink, v);
  } else if (mp_obj_is_type(v, &mp_type_set) || mp_obj_is_type(v, &mp_type_frozenset)) {
    reply_set(sink, v);
  } else {
    const char *name = qstr_str(mp_obj_get_type(v)->name);
    out(sink, OUT_UNSUPPORTED, 0, 0, (const uint8_t *)name, strlen(name));
  }
}

static void reply_exception(void *sink, mp_obj_t exc) {
  int64_t line = exception_line(exc);
  fixed_buf_t b = {.len = 0};
  if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)), MP_OBJ_FROM_PTR(&mp_type_MemoryError))) {
    out(sink, OUT_RAISED_MEMORY, line, 0, NULL, 0);
  } else if (mp_obj_is_subclass_fast(MP_OBJ_FROM_PTR(mp_obj_get_type(exc)), redis_error)) {
    describe_exception(&b, exc, 1);
    out(sink, OUT_RAISED_REDIS, line, 0, (const uint8_t *)b.buf, b.len);
  } else {
    describe_exception(&b, exc, 0);
    out(sink, OUT_RAISED, line, 0, (const uint8_t *)b.buf, b.len);
  }
}

/* Runs the function in `slot` (a script), or callback `index` of the library in `slot` when
 * `index` >= 0, with KEYS and ARGV and writes its reply to `sink`. */
API void goblin_upy_run(long slot, long index, const goblin_bytes_t *keys, size_t n_keys, const goblin_bytes_t *argv,
                        size_t n_argv, void *sink) {
  set_stack_top(__builtin_frame_address(0));
  goblin_upy_killed = 0;
  mp_obj_t result = MP_OBJ_NULL, exc = MP_OBJ_NULL;
  nlr_buf_t nlr;
  if (nlr_push(&nlr) == 0) {
    mp_obj_t fun = ((mp_obj_list_t *)MP_OBJ_TO_PTR(roots))->items[slot];
    if (index >= 0) fun = ((mp_obj_list_t *)MP_OBJ_TO_PTR(fun))->items[index];
    mp_obj_t k = new_bytes_list(keys, n_keys);
    mp_obj_t a = new_bytes_list(argv, n_argv);
    result = mp_call_function_2(fun, k, a);
    nlr_pop();
  } else {
    exc = MP_OBJ_FROM_PTR(nlr.ret_val);
  }
  /* Nothing of the run outlives it: pending kill (converting the result must not raise it: Rust
   * knows of the kill), globals it set, half-built values. */
  goblin_upy_killed = 0;
  MP_STATE_THREAD(mp_pending_exception) = MP_OBJ_NULL;
  MP_STATE_VM(sched_state) = MP_SCHED_IDLE;
  mp_map_t *g = &((mp_obj_dict_t *)MP_OBJ_TO_PTR(script_globals))->map;
  if (g->used) mp_map_clear(g);
  build_clear();
  /* Converting raises nothing by design; should it, the reply is an error, not an abort. */
  if (nlr_push(&nlr) == 0) {
    if (exc != MP_OBJ_NULL) reply_exception(sink, exc);
    else reply_value(sink, result);
    nlr_pop();
  } else {
    out(sink, OUT_FAILED, 0, 0, NULL, 0);
  }
  mp_obj_exception_clear_traceback(MP_OBJ_FROM_PTR(&MP_STATE_VM(mp_kbd_exception)));
  goblin_upy_killed = 0;
}
