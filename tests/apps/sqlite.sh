# sqlite3, Debian's command-line shell (real-programs suite): a database in
# a file, transactions committed and rolled back, WAL mode, and two
# processes inserting into one database at once under its locks.
export PATH=/usr/bin:/bin
set -e
cd /tmp && rm -rf sq && mkdir sq && cd sq
sqlite3 a.db 'create table t(k integer primary key, v text); insert into t(v) values ("one"), ("two");'
sqlite3 a.db 'begin; insert into t(v) values ("three"); rollback; begin; insert into t(v) values ("four"); commit;'
sqlite3 a.db 'select k, v from t order by k;'
sqlite3 -header -column a.db 'select count(*) as n, max(k) as top, group_concat(v, "+") as vs from t;'
sqlite3 a.db 'create index tv on t(v); pragma integrity_check; select name from sqlite_master order by name;'
sqlite3 a.db .schema
sqlite3 a.db 'pragma journal_mode;'
sqlite3 b.db 'pragma journal_mode=wal; create table w(p integer, i integer);'
writer() {
    i=0
    while [ $i -lt 40 ]; do
        echo "insert into w values ($1, $i);"
        i=$((i + 1))
    done | sed '1i .timeout 20000' | sqlite3 b.db
}
writer 1 & writer 2 & writer 3
wait
sqlite3 b.db 'select p, count(*), sum(i) from w group by p order by p; pragma journal_mode;'
ls b.db* | sort
sqlite3 b.db 'pragma wal_checkpoint(truncate);' | cut -d '|' -f 1
sqlite3 b.db 'begin immediate; insert into w values (9, 9);' &
wait
sqlite3 b.db 'select count(*) from w;'
echo 'select 6 * 7; select upper("sqlite"), length(randomblob(100)), typeof(1.5);' | sqlite3
cd / && rm -r /tmp/sq && echo sqlite done
