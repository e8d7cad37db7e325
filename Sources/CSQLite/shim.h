#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
// SQLite (Debian's libsqlite3-dev): the version store's identity index and the sync journal.
#include <sqlite3.h>
#endif
