package io.flashvec.cluster.metadata;

import java.util.List;

/**
 * A node registered in the cluster: its id, where its gRPC services and its REST API listen, and
 * its roles ({@code proxy}, {@code query}, {@code index}).
 */
public record Node(String id, String grpcAddress, String httpAddress, List<String> roles) {

  public Node {
    roles = List.copyOf(roles);
  }

  public boolean hasRole(String role) {
    return roles.contains(role);
  }
}
