/* Goblin Core's build of Jim Tcl 0.84 (replaces the header Jim's configure script writes). */
#ifndef _JIM_CONFIG_H
#define _JIM_CONFIG_H
#define HAVE_LONG_LONG 1
#define JIM_VERSION 84
#define SIZEOF_INT 4
#endif
