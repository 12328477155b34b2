/* Goblin Core's build of Jim Tcl 0.84 (replaces the header Jim's configure script writes): the core
 * interpreter only, byte strings (no UTF-8 mode), math functions in expr, no references. */
#ifndef _JIMAUTOCONF_H
#define _JIMAUTOCONF_H
#define HAVE_LONG_LONG 1
#define HAVE_DECL_ISINF 1
#define HAVE_DECL_ISNAN 1
#define HAVE_ISASCII 1
#define HAVE_SYS_TIME_H 1
#define HAVE_CLOCK_GETTIME 1
#define JIM_MATH_FUNCTIONS 1
#define JIM_STATICLIB 1
#define JIM_VERSION 84
#define SIZEOF_INT 4
#define TCL_LIBRARY ""
#define TCL_PLATFORM_OS "goblin"
#define TCL_PLATFORM_PLATFORM "unix"
#define TCL_PLATFORM_PATH_SEPARATOR ":"
#endif
