# Other Debian programs (real-programs suite): jq, bc, lua, file and dash.
export PATH=/usr/bin:/bin
set -e
echo '{"b": [1, 2, {"c": "x"}], "a": 1.5}' | jq -M -S -c .
echo '[{"n": "a", "v": 3}, {"n": "b", "v": 5}]' | jq -M -r '(map(.v) | add), (.[] | "\(.n)=\(.v)")'
jq -M -n '[range(10)] | map(select(. % 3 == 0)) | {sum: add, len: length}' -c
echo 'scale=30; 4 * a(1)' | bc -l
echo '2 ^ 200; obase=16; 255 * 255; define f(n) { if (n < 2) return n; return f(n - 1) + f(n - 2); }; obase=10; f(20)' | bc
lua5.4 -e 'local t = {} for i = 1, 10 do t[#t + 1] = i * i end print(table.concat(t, ","), #t, string.format("%5.2f", math.pi))'
lua5.4 -e 'local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end) print(co(), co(), co()) print(("petrel"):rep(2, "-"):upper())'
lua5.4 -e 'local f = io.open("/tmp/lua.txt", "w") f:write("written by lua\n") f:close() for l in io.lines("/tmp/lua.txt") do print(l) end os.remove("/tmp/lua.txt")'
file /apps/tools.sh /bin/busybox /usr/bin/python3.11 /etc /bin/sh /dev/null | sed 's/, BuildID\[sha1\]=[0-9a-f]*//'
file -b --mime-type /apps/py_data.py /etc/hello.txt
dash -c 'x=5; while [ $x -gt 0 ]; do printf "%d " $x; x=$((x - 1)); done; echo; set -- a b c; echo "$# $2"; case foo in f*) echo matched;; esac'
dash -c 'f() { local v=inner; echo $v; return 3; }; f; echo "status $?"; echo ${HOME:-unset} ${NOPE:-default}'
echo tools done
