# Terminals (real-programs suite): util-linux's script runs commands in a
# pseudo-terminal and records them; stty and tty inside it.
export PATH=/usr/bin:/bin
set -e
set +e
script -q -e -c 'tty | cut -c1-9; stty -a | head -n 3 | tail -n 2; test -t 0 && echo "inside, on a terminal"; exit 4' /tmp/typescript < /dev/null > /tmp/script.out
echo "script's status $?"
set -e
tr -d '\r' < /tmp/script.out
sed '1d;$d' /tmp/typescript | tr -d '\r'
script -q -c 'printf "one\ttwo\n"; stty size' /dev/null < /dev/null | tr -d '\r'
echo 'echo via stdin; exit' | script -q /dev/null | tr -d '\r' | grep -c 'via stdin'
echo terminals done
