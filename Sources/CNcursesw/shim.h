#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H
// Wide-character curses (get_wch, add_wch, wcwidth-aware output) needs these before the header.
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <wchar.h>
#include <ncursesw/curses.h>
#endif
