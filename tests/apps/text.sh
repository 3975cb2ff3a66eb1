# Text tools (real-programs suite): find, xargs, grep, sed and gawk over a
# tree of files, in pipelines, with diff and a few coreutils filters.
export PATH=/usr/bin:/bin
set -e
cd /tmp && rm -rf tx && mkdir tx && cd tx
for d in alpha beta gamma; do
    mkdir -p $d/inner
    for i in 1 2 3 4; do
        seq $i 7 200 | sed "s/^/$d line /" > $d/f$i.txt
        echo "key=$d$i value=$((i * 11))" > $d/inner/c$i.conf
    done
done
find . -type f | sort | head -n 5
find . -name '*.conf' -newer alpha -o -name 'f1*' | sort | wc -l
find . -type f -print0 | sort -z | xargs -0 cat | wc -l
find . -name '*.txt' | sort | xargs -n 3 echo | wc -l
find . -type d | sort | xargs -I{} sh -c 'echo "{}: $(ls {} | wc -l)"'
grep -r -l 'line 100$' . | sort
grep -rh -E 'value=(22|44)' --include='*.conf' . | sort
grep -c -v 7 alpha/f1.txt; grep -n -m 2 -w -E 'line (8|9)' beta/f1.txt beta/f2.txt
grep -o -E '[0-9]+$' gamma/f2.txt | paste -sd+ | bc
sed -n '/line 1[0-9]$/{s/line/LINE/;p}' alpha/f3.txt
sed -E 's/^([a-z]+) line ([0-9]+)$/\2:\1/' beta/f4.txt | sort -t: -k1,1n | tail -n 3
sed -i.bak 's/value/VALUE/' gamma/inner/c1.conf && cat gamma/inner/c1.conf gamma/inner/c1.conf.bak
cat */f*.txt | gawk '{ n[$1]++; s[$1] += $3 } END { for (k in n) printf "%s %d %d\n", k, n[k], s[k] }' | sort
gawk -F= '/key/ { split($2, a, " "); print FILENAME, a[1], $3 * 2 }' alpha/inner/*.conf
gawk 'BEGIN { printf "%.5f %s %d\n", atan2(0, -1), toupper(substr("petrel", 2, 3)), length("x y z") }'
seq 1 50 | gawk 'NR % 10 == 0 { printf "%s%s", sep, $0; sep = "," } END { print "" }'
diff alpha/f1.txt beta/f1.txt | head -n 4; echo "diff status $?"
diff -u alpha/f2.txt alpha/f2.txt && echo no difference
cmp alpha/f1.txt alpha/f2.txt || echo "cmp status $?"
cd / && rm -r /tmp/tx && echo text done
