#!/usr/bin/env bash
# Run by Patroni once, on the node that initialises the cluster, with a superuser connection URL as $1: creates the
# application's role and database (the role owns the database, so the server's migrations need nothing more).
set -euo pipefail
password=$(cat "$HA_SECRETS/works.password")
psql "$1" -v ON_ERROR_STOP=1 -q -v password="$password" <<'SQL'
CREATE ROLE works LOGIN PASSWORD :'password';
CREATE DATABASE works OWNER works;
SQL
