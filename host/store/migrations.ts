// Schema versions, kept in PRAGMA user_version: MIGRATIONS[i] takes version i
// to i + 1, so a database is at version MIGRATIONS.length once all ran.
// Append only: a released migration is never edited or reordered, because a
// database already past it would never see the change.

export const MIGRATIONS: readonly string[] = [
  // 1: registered plugins and the minimal task list.
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
  // 2: provider hosts and the effect journal.
  `CREATE TABLE hosts (
     name TEXT PRIMARY KEY,
     plugin TEXT NOT NULL,
     instance TEXT NOT NULL,
     key TEXT NOT NULL,
     params TEXT NOT NULL,
     handle TEXT,
     state TEXT NOT NULL,
     facts TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE TABLE intents (
     id INTEGER PRIMARY KEY,
     subject TEXT NOT NULL,
     method TEXT NOT NULL,
     plugin TEXT NOT NULL,
     key TEXT NOT NULL,
     params TEXT NOT NULL,
     sha256 TEXT NOT NULL,
     instance TEXT NOT NULL,
     pgid INTEGER NOT NULL,
     writer_pid INTEGER NOT NULL,
     writer_start TEXT NOT NULL,
     resolver_pid INTEGER,
     resolver_start TEXT,
     written_at INTEGER NOT NULL
   );
   CREATE INDEX intents_subject ON intents (subject);`,
  // 3: host profiles that use a plugin as their link.
  `CREATE TABLE host_profiles (
     name TEXT PRIMARY KEY,
     plugin TEXT NOT NULL,
     fetch TEXT,
     repo TEXT,
     max_sessions INTEGER,
     instance TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // 4: jobs on plugin hosts, the agents they run, and delivery receipts.
  `CREATE TABLE jobs (
     key TEXT PRIMARY KEY,
     workstream TEXT NOT NULL,
     agent TEXT NOT NULL,
     host TEXT NOT NULL,
     plugin TEXT NOT NULL,
     instance TEXT NOT NULL,
     kind TEXT NOT NULL,
     view_kind TEXT NOT NULL,
     handle TEXT,
     state TEXT NOT NULL,
     spec TEXT NOT NULL,
     view TEXT,
     first_msg_id TEXT,
     first_inc INTEGER,
     owes_collect INTEGER NOT NULL DEFAULT 0,
     site TEXT,
     local_repo TEXT,
     collect_failures INTEGER NOT NULL DEFAULT 0,
     next_collect_at INTEGER,
     task_id TEXT,
     writer_pid INTEGER,
     writer_start TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE UNIQUE INDEX jobs_agent ON jobs (workstream, agent);
   CREATE TABLE agents (
     workstream TEXT NOT NULL,
     name TEXT NOT NULL,
     incarnation INTEGER NOT NULL,
     job_key TEXT NOT NULL,
     host TEXT NOT NULL,
     channel_plugin TEXT NOT NULL,
     channel TEXT NOT NULL,
     pane TEXT,
     state TEXT NOT NULL,
     channel_inc INTEGER,
     wait_after INTEGER,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (workstream, name)
   );
   CREATE TABLE deadline_events (
     host TEXT NOT NULL,
     deadline_at INTEGER NOT NULL,
     fired_at INTEGER NOT NULL,
     PRIMARY KEY (host, deadline_at)
   );
   CREATE TABLE receipts (
     msg_id TEXT PRIMARY KEY,
     workstream TEXT NOT NULL,
     agent TEXT NOT NULL,
     state TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );`,
  // 5: retention's bookkeeping, one row: when the next pass is due, the
  // name this database's archive segments carry (set by the first pass that
  // moves rows), the last segment it vouches for, and how many rows it moved.
  `CREATE TABLE retention (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     next_at INTEGER NOT NULL,
     archive_id TEXT,
     archive_seq INTEGER NOT NULL,
     archived INTEGER NOT NULL
   );
   INSERT INTO retention (id, next_at, archive_id, archive_seq, archived) VALUES (1, 0, NULL, 0, 0);`,
  // 6: a job's writer now marks a spawn still under way, and is cleared when
  // the spawn finishes; a running job an older mu wrote finished its spawn
  // (or cannot be told apart from one that did), so it is not resumed.
  `UPDATE jobs SET writer_pid = NULL, writer_start = NULL WHERE state <> 'starting';`,
  // 7: the text of a message mu settled as never delivered, kept so the
  // user can send it again (mu state shows it while its job runs).
  `ALTER TABLE receipts ADD COLUMN text TEXT;`,
  // 8: a collected tree still on its host, owed its removal: written in the
  // commit that deletes its job's record, deleted once the tree is gone, so
  // a close killed between the two leaves a row that names it. The
  // resolver marks the mu removing it, as an intent's does.
  `CREATE TABLE trees_left (
     job_key TEXT PRIMARY KEY,
     workstream TEXT NOT NULL,
     agent TEXT NOT NULL,
     host TEXT NOT NULL,
     plugin TEXT NOT NULL,
     site TEXT NOT NULL,
     sha TEXT NOT NULL,
     resolver_pid INTEGER,
     resolver_start TEXT,
     created_at INTEGER NOT NULL
   );`,
  // 9: the commit a --worktree spawn made its tree from, so taking back a
  // spawn that never started can owe that tree's removal with the same HEAD
  // guard a collected tree has.
  `ALTER TABLE jobs ADD COLUMN site_sha TEXT;`,
  // 10: which left a tree on its host: a close after its collect, or the
  // taking back of a spawn that never started.
  `ALTER TABLE trees_left ADD COLUMN left_by TEXT NOT NULL DEFAULT 'close';`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
