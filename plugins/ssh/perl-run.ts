import { STATE } from "./remote-scripts.js";

// One link.exec on the remote in a single perl process, where the remote has
// perl (every Debian and Ubuntu does: perl-base is essential). The sh wrapper
// (EXEC) forks some ten processes for one run (mkdir, head, wc, rm, python3
// for the hold); on a short script those forks are most of the remote's
// share of the call. This does the same steps, in the same order, with the
// same framing and files, and holds the run's processes itself: it makes
// itself a child subreaper with prctl(2) through perl's syscall, so it needs
// no module beyond perl's core.
//
// The syscall numbers depend on the machine; it reads its own ELF header for
// which one it is. Where it does not know the machine, or prctl fails, the
// run is held by the python3 launcher (argv[5]) as under the sh wrapper, or
// left unheld where there is no python3 either: the same three outcomes,
// written to the same files (`reaper` or `unheld`, `pid`, `reaped`).
//
// argv: root, byte count, run id, cwd, output cap, the python3 launcher.

/** Sets $prctl and $setsid (syscall numbers) for this machine, or leaves them undefined. */
const MACHINE = `
my ($prctl, $setsid);
if (open(my $elf, '<', '/proc/self/exe')) {
  binmode $elf;
  my $h = '';
  read($elf, $h, 20);
  close $elf;
  if (length($h) == 20) {
    my ($class, $data) = unpack('x4 C C', $h);
    my $m = unpack($data == 2 ? 'x18 n' : 'x18 v', $h);
    my %nr = (
      '2:62' => [157, 112], '2:183' => [167, 157], '2:243' => [167, 157], '2:258' => [167, 157],
      '1:3' => [172, 66], '1:40' => [172, 66], '2:21' => [171, 66], '2:22' => [172, 66],
    );
    my $n = $nr{"$class:$m"};
    ($prctl, $setsid) = @$n if $n;
  }
}
sub hold { defined $prctl && syscall($prctl, 36, 1, 0, 0, 0) == 0 }
`;

/** Exits 0 only where this perl can hold a run (the reach check's probe). */
export const PERL_PROBE = `${MACHINE}exit(hold() ? 0 : 1);`;

export const PERL_EXEC = String.raw`
my ($root, $n, $id, $cwd, $lim, $launch) = @ARGV;
binmode STDOUT;
$| = 1;
# A caller gone before the run starts (its ssh killed, the session begun
# late) must not leave the run's directory: a write to it fails instead of
# killing this process, and the start below then cleans up and stops.
$SIG{PIPE} = 'IGNORE';
chdir $root or do { print "MU-SSH-NOROOT $id\n"; exit 0 };
my $d = readlink('/proc/self/cwd') // do { require Cwd; Cwd::getcwd() };
for my $part ('${STATE}', 'runs', $id) {
  $d .= "/$part";
  mkdir $d unless -d $d;
  -d $d or do { print "MU-SSH-NOWRITE $id\n"; exit 0 };
}
sub rmtree {
  my ($p) = @_;
  if (-d $p && !-l $p) {
    opendir(my $h, $p) or return;
    rmtree("$p/$_") for grep { $_ ne '.' && $_ ne '..' } readdir $h;
    closedir $h;
    rmdir $p;
  } else {
    unlink $p;
  }
}
binmode STDIN;
my $script = '';
while (length($script) < $n) {
  my $r = sysread(STDIN, $script, $n - length($script), length($script));
  last unless $r;
}
open(my $sf, '>', "$d/script") or do { rmtree($d); print "MU-SSH-NOWRITE $id\n"; exit 0 };
binmode $sf;
print $sf $script;
close $sf;
if (length($script) != $n) { rmtree($d); print "MU-SSH-SHORT $id " . length($script) . "\n"; exit 0 }
chdir $cwd or do { rmtree($d); print "MU-SSH-NOCWD $id\n"; exit 0 };
print "MU-SSH-STARTED $id\n" or do { rmtree($d); exit 0 };
${MACHINE}
sub put {
  my ($name, $text) = @_;
  open(my $f, '>', "$d/$name.tmp") or return;
  print $f "$text\n";
  close $f;
  rename "$d/$name.tmp", "$d/$name";
}
# PATH's python3, or the system's own where PATH has one (EXEC's rule).
sub python {
  for (split /:/, ($ENV{PATH} // '')) {
    next unless $_ ne '' && -x "$_/python3";
    return -x '/usr/bin/python3' ? '/usr/bin/python3' : "$_/python3";
  }
  return undef;
}
# Children of a pid, from every process's stat (its parent is the field after the name).
sub tree {
  my %kids;
  opendir(my $h, '/proc') or return ();
  for my $e (grep { /^\d+$/ } readdir $h) {
    open(my $f, '<', "/proc/$e/stat") or next;
    my $s = <$f>;
    close $f;
    next unless defined $s;
    my @f = split / /, substr($s, rindex($s, ')') + 2);
    push @{$kids{$f[1]}}, $e;
  }
  closedir $h;
  my @out;
  my @todo = ($$);
  while (@todo) { for my $k (@{$kids{pop @todo} || []}) { push @out, $k; push @todo, $k } }
  return @out;
}
sub killall {
  for (;;) {
    kill 'KILL', tree();
    my $p;
    do { $p = waitpid(-1, 1) } while ($p > 0);
    return if $p == -1;
    select(undef, undef, undef, 0.02);
  }
}
my $held = hold();
my $py = $held ? undef : python();
$SIG{USR1} = sub { die "mu-stop\n" } if $held;
my ($pid, $status);
my $ran = eval {
  $pid = fork();
  die "fork: $!\n" unless defined $pid;
  if ($pid == 0) {
    $SIG{USR1} = 'DEFAULT';
    $SIG{PIPE} = 'DEFAULT';
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', "$d/out");
    open(STDERR, '>', "$d/err");
    if ($held) {
      syscall($setsid);
      exec('sh', "$d/script");
    } elsif (defined $py) {
      exec($py, '-I', '-S', '-c', $launch, $d, 'sh', "$d/script");
    } else {
      exec('setsid', 'sh', "$d/script");
    }
    exit 127;
  }
  if ($held) {
    put('pid', $pid);
    put('reaper', $$);
  } elsif (!defined $py) {
    put('unheld', '');
    put('pid', $pid);
  }
  for (;;) {
    my $p = waitpid(-1, 0);
    if ($p == $pid) { $status = $?; last }
    if ($p == -1) { $status = 0; last }
  }
  1;
};
if (!$ran) {
  if ($@ eq "mu-stop\n") {
    $SIG{USR1} = 'IGNORE';
    killall();
    put('reaped', $$);
    exit 137;
  }
  $status = 127 << 8;
}
# As sh reports a child a signal ended: 128 plus the signal.
my $code = ($status & 127) ? 128 + ($status & 127) : $status >> 8;
my $o = -s "$d/out" || 0;
my $e = -s "$d/err" || 0;
print "MU-SSH-RESULT $id $code $o $e\n";
for my $name ('out', 'err') {
  open(my $f, '<', "$d/$name") or next;
  binmode $f;
  my ($left, $buf) = ($lim);
  while ($left > 0) {
    my $r = sysread($f, $buf, $left > 65536 ? 65536 : $left);
    last unless $r;
    syswrite(STDOUT, $buf);
    $left -= $r;
  }
  close $f;
}
rmtree($d);
exit 0;
`;
