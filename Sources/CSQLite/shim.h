#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// SQLite (Debian's libsqlite3-dev): the sync journal's store.
#include <sqlite3.h>
#endif
