-- 0016: a sanctions list's version is never used twice. Versions were
-- max(version) + 1 of the rows present, and an empty list leaves no rows,
-- so the load after an empty one took version 1 again: a worker that had
-- version 1 cached from an earlier list could keep it, and the console's
-- sanctions page named the earlier list's loader for the new one. Loads
-- now take their version from this sequence, starting past every version
-- in use.
create sequence sanctions_version_seq as bigint;
select setval('sanctions_version_seq', coalesce((select max(version) from sanctions_entries), 0) + 1, false);
