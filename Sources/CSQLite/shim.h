// The system SQLite for Linux (Debian: libsqlite3-dev); Apple platforms use the SDK's SQLite3 module.
#include <sqlite3.h>
