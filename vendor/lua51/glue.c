/* Goblin Core's C glue for Lua 5.1: the pieces that must be C because they raise Lua errors
 * (a Lua error is a longjmp, and no Rust frame may be jumped over) or reach Lua's internals.
 *
 * - Read-only tables (Redis 7's protected globals and libraries): a flag bit in Table.flags, checked
 *   by the table setters that lvm.c and lapi.c are compiled to call (see build.rs).
 * - Host functions: Rust functions are pushed as C closures around one trampoline, which raises
 *   the error a Rust function reports instead of letting Rust call lua_error.
 * - The instruction-count hook, which asks Rust whether the script must stop and raises for it,
 *   and the same question for long loops inside library functions (goblin.patch).
 */
#include <string.h>

#include "lua.h"
#include "lauxlib.h"
#include "lobject.h"
#include "lstate.h"
#include "ltable.h"
#include "ldebug.h"

/* The GC's `marked` byte uses bits 0-6 (lgc.h) and preserves the others: bit 7 is ours. (Table.flags
 * is not free: luaH_new sets all its bits.) */
#define GOBLIN_READONLY 0x80

static void check_writable(lua_State *L, Table *t) {
  if (t->marked & GOBLIN_READONLY) luaG_runerror(L, "Attempt to modify a readonly table");
}

TValue *goblin_ro_luaH_set(lua_State *L, Table *t, const TValue *key) {
  check_writable(L, t);
  return luaH_set(L, t, key);
}

TValue *goblin_ro_luaH_setnum(lua_State *L, Table *t, int key) {
  check_writable(L, t);
  return luaH_setnum(L, t, key);
}

/* Prepares the table at idx, the KEYS or ARGV of the previous run, to be refilled with n elements
 * (Redis builds both afresh for every call; reusing them spares two tables of garbage per call, and
 * no script can keep a reference to them across calls: globals are read-only). Returns 0 when the
 * script left anything but array elements in it (fields, a metatable, elements past the array
 * part), or when its array part is too small or far too large: the caller then builds a new one. */
int goblin_lua51_reset_array(lua_State *L, int idx, int n) {
  Table *t = (Table *)lua_topointer(L, idx);
  int i;
  if (t->metatable != NULL || t->sizearray < n || t->sizearray > 2 * n + 16) return 0;
  for (i = 0; i < sizenode(t); i++)
    if (!ttisnil(gval(gnode(t, i)))) return 0;
  for (i = n; i < t->sizearray; i++) setnilvalue(&t->array[i]);
  return 1;
}

/* Marks (or unmarks) the table at idx read-only. */
void goblin_lua51_set_readonly(lua_State *L, int idx, int on) {
  Table *t = (Table *)lua_topointer(L, idx);
  if (on) t->marked |= GOBLIN_READONLY; else t->marked &= (lu_byte)~GOBLIN_READONLY;
}

int goblin_lua51_is_readonly(lua_State *L, int idx) {
  return lua_istable(L, idx) && (((Table *)lua_topointer(L, idx))->marked & GOBLIN_READONLY) != 0;
}

/* setmetatable that refuses read-only tables (the base library's writes the metatable directly). */
static int checked_setmetatable(lua_State *L) {
  /* Raised as luaG_runerror does from a C function: no position prefix (as Redis's). */
  if (goblin_lua51_is_readonly(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* Redis 7's pcall: like Lua's, but an error table `{err=...}` (what redis.call raises) comes back as
 * its message string. In C, not a host function, so the protected code keeps the memory limit. */
static int redis_pcall(lua_State *L) {
  int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) lua_replace(L, -2);
      else lua_pop(L, 1);
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

void goblin_lua51_install_pcall(lua_State *L, int globals) {
  lua_pushcfunction(L, redis_pcall);
  lua_setfield(L, globals, "pcall");
}

/* Replaces the global setmetatable (on the table at idx, the globals being set up) by the check. */
void goblin_lua51_guard_setmetatable(lua_State *L, int globals) {
  lua_getfield(L, globals, "setmetatable");
  lua_pushcclosure(L, checked_setmetatable, 1);
  lua_setfield(L, globals, "setmetatable");
}

/* Pushes `chunk:line: ` for the function at `level` (1: the caller of the running C function), as
 * luaL_error prefixes its messages. */
void goblin_lua51_where(lua_State *L, int level) {
  luaL_where(L, level);
}

/* A host function: returns its result count, or -1 with the error value on top of the stack. */
typedef int (*goblin_host_fn)(lua_State *L);

/* Non-zero while a host function runs: the allocator then never fails (see the Rust side). */
int goblin_lua51_in_host = 0;

static int trampoline(lua_State *L) {
  goblin_host_fn f = (goblin_host_fn)lua_touserdata(L, lua_upvalueindex(1));
  goblin_lua51_in_host++;
  int n = f(L);
  goblin_lua51_in_host--;
  if (n < 0) return lua_error(L);
  return n;
}

/* Pushes a host function as a Lua function. */
void goblin_lua51_push_host_fn(lua_State *L, goblin_host_fn f) {
  lua_pushlightuserdata(L, (void *)f);
  lua_pushcclosure(L, trampoline, 1);
}

/* Pushes a host function closing over the `nup` values on top of the stack (popped): the host
 * function finds them at upvalues 2..nup+1 (upvalue 1 is the function itself). */
void goblin_lua51_push_host_closure(lua_State *L, goblin_host_fn f, int nup) {
  lua_pushlightuserdata(L, (void *)f);
  lua_insert(L, -(nup + 1));
  lua_pushcclosure(L, trampoline, nup + 1);
}

/* The hook asks Rust whether to stop: 0 = go on; 1 = raise the value Rust pushed; 2 = raise it and
 * keep raising on every line, so a script's pcall cannot swallow the stop (SCRIPT KILL). */
extern int goblin_lua51_on_hook(lua_State *L);

static void count_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  int what = goblin_lua51_on_hook(L);
  if (what == 0) return;
  if (what == 2) lua_sethook(L, count_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  lua_error(L);
}

/* The budget check of long loops inside one library call (goblin.patch, lgoblin.h: the pattern
 * matcher, plain find, string.rep, table.insert/remove/sort, collectgarbage), where the count
 * hook never fires: the hook's question, asked every so many steps of their work. Raises as the
 * hook does when the script must stop, with hooks off as inside a hook: else the line hook just
 * set would raise again inside the error handler, and the error would name the handler's line.
 * (The pcall that catches the error restores them.) */
void goblin_lua51_lib_check(lua_State *L) {
  int what = goblin_lua51_on_hook(L);
  if (what == 0) return;
  if (what == 2) lua_sethook(L, count_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  L->allowhook = 0;
  lua_error(L);
}

void goblin_lua51_set_hook(lua_State *L, int count) {
  if (count > 0) lua_sethook(L, count_hook, LUA_MASKCOUNT, count);
  else lua_sethook(L, NULL, 0, 0);
}
