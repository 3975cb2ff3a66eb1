#!/bin/sh
# The application benchmarks of `./petrel bench --suite apps` (the L4Linux
# paper's Table IV, with Debian's own programs): the root archive's
# /etc/lxrun runs this script on Linux and on Petrel, then `lxbench --end`.
#
# First it makes every input from nothing, the same way on every system
# (sox synthesises the sound, bench/linux/picture.c draws the picture,
# ispell's word list gives the text; Ghostscript's row draws page.ps),
# then it times one run of each program with `lxbench --time ROW 1 PROGRAM
# ARG...` (a BENCH line, or a BENCH-SKIP line when the program fails) and
# prints "BENCH-OUT FILE SHA256" for its output, which the harness compares
# with Linux's, and removes it. An input that cannot be made is reported as
# "apps: input failed: COMMAND", and the rows that need it fail after it;
# a program that cannot be loaded, as "apps: PROGRAM does not load".
#
# Every file stays within 2 MiB and all of them within a few: Petrel's
# in-memory file system keeps at most 32 MiB of written files, and with
# the personality in the kernel a file written with write() cannot grow
# past 2 MiB (ENOSPC; docs/benchmarks.md).

IN=/tmp/in
OUT=/tmp/out
mkdir -p $IN $OUT

# Runs an input-making command; says so when it fails.
input() {
    "$@" || echo "apps: input failed (status $?): $*"
}

# Prints the sha256 of an output file as "BENCH-OUT NAME HASH" (an empty
# one when it is missing), then removes it.
output() {
    set -- $(sha256sum $1 2>/dev/null || echo - $1)
    echo "BENCH-OUT ${2##*/} $1"
    rm -f $2
}

# Sound: 4 s of 44.1 kHz stereo (a sweep beside pink noise; -R seeds sox's
# generator the same way every time), its first second, and 30 s of 8 kHz
# u-law speech-band sound for the GSM coder; the MP3s madplay decodes.
input sox -R -D -n -r 44100 -c 2 -b 16 $IN/tone.wav synth 4 sine 200-2000 pinknoise vol 0.5
input sox -R -D $IN/tone.wav $IN/short.wav trim 0 1
input sox -R -D -n -r 8000 -c 1 -e u-law $IN/speech.au synth 30 sine 300-3000 pinknoise vol 0.5
input lame --quiet -b 128 $IN/tone.wav $IN/long.mp3
input lame --quiet -b 128 $IN/short.wav $IN/short.mp3

# A picture of 960x720 pixels (bench/linux/picture.c: gradients, soft
# discs, stripes and grain), as PPM, JPEG (quality 75) and TIFF (RGB, and
# the grey one tiffdither takes): 2,073,600 bytes of pixels.
input picture 960 720 $IN/page.ppm
input cjpeg -outfile $IN/page.jpg $IN/page.ppm
input ppm2tiff $IN/page.ppm $IN/page.tif
input tiff2bw $IN/page.tif $IN/grey.tif

# Text: the American dictionary's words (its affix flags cut off), every
# fifth one of more than three letters misspelt by swapping its last two,
# twelve to a line; and the dictionary's hash table, which Debian builds
# when the package is installed.
input sh -c "gunzip -c /usr/share/ispell/american.med+.mwl.gz > $IN/words.mwl"
input buildhash -s $IN/words.mwl /usr/lib/ispell/english.aff $IN/american.hash
input sh -c "sed 's|/.*||' $IN/words.mwl | awk '{ w = \$0; if (NR % 5 == 0 && length(w) > 3)
    w = substr(w, 1, length(w) - 2) substr(w, length(w), 1) substr(w, length(w) - 1, 1);
    printf \"%s%s\", w, (NR % 12 == 0 ? \".\\n\" : \" \") }' > $IN/text.txt"

# Each program with its libraries, loaded by glibc's dynamic linker
# without running it: a program that does not load says why here.
B=/usr/bin
for p in lame madplay cjpeg djpeg tiff2bw tiffdither tiffmedian gs ispell toast sox flac xz; do
    /lib/ld-linux-aarch64.so.1 --list $B/$p > /dev/null || echo "apps: $B/$p does not load"
done

lxbench --time app_lame 1 $B/lame --quiet -b 128 $IN/tone.wav $OUT/lame.mp3
output $OUT/lame.mp3
lxbench --time app_madplay_short 1 $B/madplay -q -o wave:$OUT/madplay_short.wav $IN/short.mp3
output $OUT/madplay_short.wav
lxbench --time app_madplay_long 1 $B/madplay -q -o wave:$OUT/madplay_long.wav $IN/long.mp3
output $OUT/madplay_long.wav
lxbench --time app_cjpeg 1 $B/cjpeg -quality 90 -outfile $OUT/cjpeg.jpg $IN/page.ppm
output $OUT/cjpeg.jpg
lxbench --time app_djpeg 1 $B/djpeg -outfile $OUT/djpeg.ppm $IN/page.jpg
output $OUT/djpeg.ppm
lxbench --time app_tiff2bw 1 $B/tiff2bw $IN/page.tif $OUT/tiff2bw.tif
output $OUT/tiff2bw.tif
lxbench --time app_tiffdither 1 $B/tiffdither $IN/grey.tif $OUT/tiffdither.tif
output $OUT/tiffdither.tif
lxbench --time app_tiffmedian 1 $B/tiffmedian $IN/page.tif $OUT/tiffmedian.tif
output $OUT/tiffmedian.tif
lxbench --time app_ghostscript 1 $B/gs -q -dSAFER -dBATCH -dNOPAUSE -dNONATIVEFONTMAP -sDEVICE=png16m -r100 \
    -sOutputFile=$OUT/ghostscript.png /bench/page.ps
output $OUT/ghostscript.png
lxbench --time app_ispell 1 /bin/sh -c "exec $B/ispell -l -d $IN/american.hash < $IN/text.txt > $OUT/ispell.txt"
output $OUT/ispell.txt
lxbench --time app_toast 1 $B/toast -p -f $IN/speech.au
output $IN/speech.au.gsm
lxbench --time app_sox 1 $B/sox -R -D $IN/tone.wav -e ima-adpcm $OUT/sox.wav
output $OUT/sox.wav
lxbench --time app_flac 1 $B/flac -s -f -5 -o $OUT/flac.flac $IN/tone.wav
output $OUT/flac.flac
lxbench --time app_xz 1 $B/xz -k -f -6 -T1 $IN/text.txt
output $IN/text.txt.xz
