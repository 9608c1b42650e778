// Schema versions: migration i (0-based) takes user_version i to i+1. Append
// only; a released migration is never edited.

export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE plugins (
     name TEXT PRIMARY KEY,
     argv TEXT NOT NULL,
     declaration TEXT NOT NULL,
     instance TEXT NOT NULL,
     version TEXT NOT NULL,
     added_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE TABLE tasks (
     id TEXT PRIMARY KEY,
     state TEXT NOT NULL,
     claimed_by TEXT,
     created_at INTEGER NOT NULL
   );`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
