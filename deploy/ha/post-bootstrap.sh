#!/usr/bin/env bash
# Run by Patroni once, on the node that initialises the cluster, with a superuser connection URL as $1 (its password
# in the passfile Patroni names in PGPASSFILE): creates the application's role and database (the role owns the
# database, so the server's migrations need nothing more). The role's password goes to psql on its standard input
# (printf is a shell builtin): as an argument it would show in /proc/*/cmdline to every local user.
set -euo pipefail
password=$(<"$HA_SECRETS/works.password")
{
  printf "\\set password '%s'\n" "${password//\'/\'\'}"
  cat <<'SQL'
CREATE ROLE works LOGIN PASSWORD :'password';
CREATE DATABASE works OWNER works;
SQL
} | psql "$1" -v ON_ERROR_STOP=1 -q
