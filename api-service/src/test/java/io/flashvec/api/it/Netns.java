package io.flashvec.api.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A network namespace of a test's own, joined to the root namespace by a veth pair: the root end
 * has {@code 10.77.N.1/24}, the namespace end {@code 10.77.N.2/24}. Processes started through
 * {@link #exec()} see only the namespace's loopback and its veth end; {@link #partition()} takes
 * the namespace end down (nothing passes either way, connections time out as on a cut network) and
 * {@link #heal()} brings it up again.
 *
 * <p>Only the namespace end is ever taken down: with the root end down its connected route would
 * go, and packets for 10.77.N.2 would follow the default route out of the machine. As a second
 * guard a blackhole route for the /24 (high metric) catches them should the connected route be
 * missing for any other reason.
 *
 * <p>Names carry the test JVM's pid ({@code fvpart-<pid>}), so {@link #removeLeftovers()} can
 * remove what a killed earlier run left behind (its namespace, the processes in it, its route, and
 * processes started with {@link #ownerOption()} or named {@code fvpart-<pid>-etcd}) without
 * touching a concurrent run's. Needs root and iproute2.
 */
final class Netns implements AutoCloseable {

  static final String PREFIX = "fvpart-";

  private final String name;
  private final String rootDev;
  private final String nsDev;
  private final int subnet;
  private boolean closed;

  private Netns(String name, String rootDev, String nsDev, int subnet) {
    this.name = name;
    this.rootDev = rootDev;
    this.nsDev = nsDev;
    this.subnet = subnet;
  }

  /** Why this machine cannot run namespace tests, or {@code null} if it can. */
  static String unavailableReason() {
    try {
      String status = Files.readString(Path.of("/proc/self/status"));
      boolean root =
          status.lines().anyMatch(l -> l.startsWith("Uid:") && l.split("\\s+")[1].equals("0"));
      if (!root) {
        return "needs root (uid 0) to create network namespaces and veth pairs";
      }
    } catch (IOException e) {
      return "cannot read /proc/self/status: " + e;
    }
    try {
      if (run(false, "ip", "netns", "list").exit != 0) {
        return "`ip netns list` failed: iproute2 with network namespace support is needed";
      }
    } catch (UncheckedIOException e) {
      return "the `ip` command (iproute2) is not installed: " + e.getMessage();
    }
    return null;
  }

  /** The JVM option that marks a process as started by this test JVM. */
  static String ownerOption() {
    return "-Dflashvec.it.owner=" + PREFIX + ProcessHandle.current().pid();
  }

  /** The etcd member name of this test JVM's etcd. */
  static String etcdName() {
    return PREFIX + ProcessHandle.current().pid() + "-etcd";
  }

  /** Creates the namespace, the veth pair and the addresses, with {@code egressRate} on the end. */
  static Netns create(String egressRate) {
    long pid = ProcessHandle.current().pid();
    int subnet = (int) (1 + pid % 250);
    Netns n = new Netns(PREFIX + pid, "fvp" + pid + "a", "fvp" + pid + "b", subnet);
    try {
      n.ip("netns", "add", n.name);
      n.ip("link", "add", n.rootDev, "type", "veth", "peer", "name", n.nsDev);
      n.ip("link", "set", n.nsDev, "netns", n.name);
      n.ip("addr", "add", n.rootAddress() + "/24", "dev", n.rootDev);
      n.ip("route", "add", "blackhole", n.network(), "metric", "4000");
      n.ip("link", "set", n.rootDev, "up");
      n.inNs("ip", "link", "set", "lo", "up");
      n.inNs("ip", "addr", "add", n.address() + "/24", "dev", n.nsDev);
      n.inNs("ip", "link", "set", n.nsDev, "up");
      if (egressRate != null) {
        // slows what the namespace sends, so its writes are in flight when the link goes down
        n.inNs(
            "tc",
            "qdisc",
            "add",
            "dev",
            n.nsDev,
            "root",
            "tbf",
            "rate",
            egressRate,
            "burst",
            "16kb",
            "latency",
            "5s");
      }
    } catch (RuntimeException e) {
      n.close();
      throw e;
    }
    return n;
  }

  /** The namespace end's address (what a node inside binds and advertises). */
  String address() {
    return "10.77." + subnet + ".2";
  }

  /** The root end's address (what nodes outside bind, so that the namespace reaches them). */
  String rootAddress() {
    return "10.77." + subnet + ".1";
  }

  private String network() {
    return "10.77." + subnet + ".0/24";
  }

  /** The launcher prefix that runs a command inside the namespace (it execs the command). */
  String[] exec() {
    return new String[] {"ip", "netns", "exec", name};
  }

  /** Cuts the namespace off: its veth end goes down. */
  void partition() {
    inNs("ip", "link", "set", nsDev, "down");
  }

  /** Joins it again. */
  void heal() {
    inNs("ip", "link", "set", nsDev, "up");
  }

  /** Removes the egress rate limit {@link #create} set, if any. */
  void unthrottle() {
    run(false, "ip", "netns", "exec", name, "tc", "qdisc", "del", "dev", nsDev, "root");
  }

  private void inNs(String... cmd) {
    List<String> c = new ArrayList<>(List.of(exec()));
    c.addAll(List.of(cmd));
    run(true, c.toArray(String[]::new));
  }

  private void ip(String... args) {
    List<String> c = new ArrayList<>(List.of("ip"));
    c.addAll(List.of(args));
    run(true, c.toArray(String[]::new));
  }

  /** Kills the processes left in the namespace, deletes it (and the veth pair) and the route. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    remove(name, network());
  }

  private static void remove(String ns, String network) {
    Result pids = run(false, "ip", "netns", "pids", ns);
    if (pids.exit == 0) {
      pids.out.lines().map(String::trim).filter(s -> !s.isEmpty()).forEach(Netns::kill);
    }
    run(false, "ip", "netns", "del", ns);
    if (network != null) {
      run(false, "ip", "route", "del", "blackhole", network);
    }
  }

  /**
   * Removes what earlier runs of this test left when their JVM was killed: namespaces, processes
   * marked with their owner's pid, and blackhole routes of subnets no veth uses any more.
   */
  static void removeLeftovers() {
    for (String line : run(false, "ip", "netns", "list").out.lines().toList()) {
      String ns = line.split("\\s+")[0];
      if (ns.startsWith(PREFIX) && !ownerAlive(ns)) {
        System.out.println("[flashvec] removing a leftover network namespace " + ns);
        remove(ns, null);
      }
    }
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : procs.toList()) {
        String pid = p.getFileName().toString();
        if (!pid.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String cmd;
        try {
          cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
        } catch (IOException e) {
          continue; // gone meanwhile
        }
        for (String arg : cmd.split("\0")) {
          String owner = null;
          if (arg.startsWith("-Dflashvec.it.owner=" + PREFIX)) {
            owner = arg.substring("-Dflashvec.it.owner=".length());
          } else if (arg.startsWith(PREFIX) && arg.endsWith("-etcd")) {
            owner = arg.substring(0, arg.length() - "-etcd".length());
          }
          if (owner != null && !ownerAlive(owner)) {
            System.out.println("[flashvec] killing a leftover process " + pid + " of " + owner);
            kill(pid);
            break;
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (String line :
        run(false, "ip", "route", "show", "type", "blackhole").out.lines().toList()) {
      String[] f = line.trim().split("\\s+");
      if (f.length >= 2 && f[0].equals("blackhole") && f[1].startsWith("10.77.")) {
        String net = f[1];
        if (run(false, "ip", "-o", "addr", "show", "to", net).out.isBlank()) {
          run(false, "ip", "route", "del", "blackhole", net);
        }
      }
    }
  }

  private static boolean ownerAlive(String name) {
    String digits = name.substring(PREFIX.length()).replaceAll("\\D.*$", "");
    if (digits.isEmpty()) {
      return false;
    }
    return ProcessHandle.of(Long.parseLong(digits)).map(ProcessHandle::isAlive).orElse(false);
  }

  private static void kill(String pid) {
    ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
  }

  private record Result(int exit, String out) {}

  private static Result run(boolean check, String... cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("timed out: " + String.join(" ", cmd));
      }
      if (check && p.exitValue() != 0) {
        throw new IllegalStateException(
            "command failed [exit=" + p.exitValue() + "]: " + String.join(" ", cmd) + "\n" + out);
      }
      return new Result(p.exitValue(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(String.join(" ", cmd) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
