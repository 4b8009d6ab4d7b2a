package io.flashvec.api;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.when;

import io.flashvec.cluster.CollectionService;
import io.flashvec.index.CollectionConfig;
import io.flashvec.index.Distance;
import io.flashvec.index.IndexParams;

/** Stubs shared by the controller tests' mocked {@link CollectionService}. */
public final class ServiceStubs {

  private ServiceStubs() {}

  /**
   * Answers {@code service.config(name)} with the configuration its description gives (4 × Dot when
   * {@code describe} is not stubbed), as the real services do.
   */
  public static void configFromTheDescription(CollectionService service) {
    when(service.config(any()))
        .thenAnswer(
            inv -> {
              CollectionService.CollectionDescription d = service.describe(inv.getArgument(0));
              return d != null
                  ? d.config()
                  : new CollectionConfig(4, Distance.DOT, 1, 1, IndexParams.DEFAULT);
            });
  }
}
