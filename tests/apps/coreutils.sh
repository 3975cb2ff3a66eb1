# GNU coreutils over a directory tree (real-programs suite): ls -l, cp -a,
# mv, stat, du, sort, uniq, comm, split, and more; times are fixed with
# touch so that the listings can be compared with Linux's.
export PATH=/usr/bin:/bin
set -e
cd /tmp && rm -rf cu && mkdir cu && cd cu
mkdir -p tree/a/b tree/c
printf 'one\ntwo\nthree\n' > tree/a/words
seq 1 3000 > tree/a/b/numbers
printf '' > tree/c/empty
head -c 100000 /dev/zero > tree/c/zeros
ln -s a/words tree/wl
ln tree/a/words tree/c/hard
chmod 600 tree/c/empty; chmod 751 tree/a/b
find tree -exec touch -h -d '2021-06-07 08:09:10' {} +
ls -l tree tree/a tree/c
ls -lR --time-style=long-iso tree | sed 1d
ls -1sh tree/c; ls -la tree/a | head -n 3
ls -i tree/a/words tree/c/hard | cut -d ' ' -f 1 | uniq | wc -l
cp -a tree copy && ls -l copy/c && diff -r tree copy && echo copied
cp -a tree/wl tree/c/empty . && ls -l wl empty
stat -c '%n|%s|%a|%A|%h|%U|%G|%F|%y' tree tree/a/words tree/wl tree/c/zeros copy/c/hard
stat -L -c '%n %F %s' tree/wl
stat -f -c '%T' .
du -a tree | sort -k2
du -sh tree; du -sb tree; du -s --apparent-size tree/c
mv copy/a/words copy/moved && mv copy/a copy/c/ && find copy | sort
sort -r tree/a/words; sort -n -r tree/a/b/numbers | head -n 2; printf 'b 2\na 10\nb 1\n' | sort -k1,1 -k2,2n
printf 'x\nx\ny\nx\nz\nz\n' | uniq -c; printf 'x\nx\ny\n' | uniq -u
printf 'a\nb\nd\n' > l1; printf 'b\nc\nd\n' > l2; comm l1 l2; comm -12 l1 l2
split -l 1000 -d tree/a/b/numbers part. && wc -l part.* && cat part.* | cmp - tree/a/b/numbers && echo joined
split -b 7 -a 3 tree/a/words w. && ls w.* && cat w.aaa
head -n 3 tree/a/b/numbers | tac; tail -c 12 tree/a/b/numbers | od -c | head -n 1
cut -c 1-3 tree/a/words | tr a-z A-Z | paste - - -; nl -ba tree/a/words; wc tree/a/words
md5sum tree/a/words; sha1sum tree/c/zeros; b2sum -l 64 tree/a/words; cksum tree/a/words
printf '%s=%05.1f\n' pi 3.14159; expr 6 \* 7; seq -w 8 11 | tr '\n' ' '; echo; factor 360 1001
basename /x/y/z.txt .txt; dirname /x/y/z.txt; realpath tree/wl; readlink -f copy/../tree/wl
env -i A=1 env; id -u; id -un; uname -s; nproc | grep -c .
truncate -s 5000 sparse && stat -c '%s' sparse && wc -c < sparse
mkdir -p m/n/o && rmdir -p m/n/o && ls m 2>&1 || echo "gone: $?"
install -m 700 -d inst && install -m 644 tree/a/words inst/ && ls -l inst | cut -c 1-10
shred -u -n 1 l1 && ls l1 2>&1 || true
date -u -d @1000000000 '+%F %T %A'; date -u -d '2020-02-29 + 1 year' +%F
cd / && rm -r /tmp/cu && echo coreutils done
