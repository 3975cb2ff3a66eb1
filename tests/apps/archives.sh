# Archives and compressors (real-programs suite): a tree packed with tar
# and gzip, xz and bzip2, listed, unpacked elsewhere and compared; the
# archives themselves made reproducible (fixed times, owners and order) so
# that their checksums are compared with Linux's too.
export PATH=/usr/bin:/bin
set -e
cd /tmp && rm -rf ar && mkdir -p ar/src/sub/deeper && cd ar
seq 1 20000 > src/numbers
yes 'a line of text repeated' | head -n 3000 > src/sub/text
printf 'binary\000bytes\377\001' > src/sub/deeper/bin
ln -s ../numbers src/sub/link
ln src/numbers src/hard
chmod 640 src/sub/text
touch -d '2020-01-02 03:04:05' src/numbers src/sub/text src/sub/deeper/bin src/sub/deeper src/sub src/hard src
opts='--sort=name --owner=0 --group=0 --numeric-owner --mtime=@1577934245'
tar cf plain.tar $opts src
tar czf t.tar.gz $opts src
tar cJf t.tar.xz $opts src
tar cjf t.tar.bz2 $opts src
gzip -n -9 -c plain.tar > p.gz
xz -c plain.tar > p.xz
bzip2 -c plain.tar > p.bz2
tar tvf plain.tar
sha256sum plain.tar p.gz p.xz p.bz2 | cut -c 1-16,65-
for a in t.tar.gz t.tar.xz t.tar.bz2; do
    rm -rf out && mkdir out
    tar xf $a -C out
    diff -r src out/src && echo "$a: same tree"
    cmp src/numbers out/src/hard && echo "$a: hard link kept"
done
stat -c '%n %a %h %s %Y' out/src/sub/text out/src/numbers
readlink out/src/sub/link
gzip -t p.gz && xz -t p.xz && bzip2 -t p.bz2 && echo tested
xz -l p.xz | tail -n 1 | tr -s ' ' | cut -d ' ' -f 2-5
gzip -l p.gz | tail -n 1 | tr -s ' '
zcat p.gz | cmp - plain.tar && xzcat p.xz | cmp - plain.tar && bzcat p.bz2 | cmp - plain.tar && echo unpacked equal
xz -9e -c src/numbers | xz -d | tail -n 1
cd / && rm -r /tmp/ar && echo archives done
