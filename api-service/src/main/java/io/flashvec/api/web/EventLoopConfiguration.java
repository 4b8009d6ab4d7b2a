package io.flashvec.api.web;

import io.flashvec.api.FlashVecProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/**
 * The HTTP server's event loops ({@link BalancedEventLoops}, as many as Reactor Netty's default)
 * and the guards on its connections ({@link ConnectionGuard}).
 */
@Configuration(proxyBeanMethods = false)
public class EventLoopConfiguration {

  @Bean(destroyMethod = "close")
  BalancedEventLoops httpEventLoops() {
    return new BalancedEventLoops(LoopResources.DEFAULT_IO_WORKER_COUNT);
  }

  /**
   * The server starts on the resource factory's loops (after any customizer's {@code runOn}), so
   * the loops are given to it; it does not dispose loops it did not create.
   */
  @Bean
  ReactorResourceFactory reactorResourceFactory(BalancedEventLoops loops) {
    ReactorResourceFactory f = new ReactorResourceFactory();
    f.setUseGlobalResources(false);
    f.setLoopResources(loops.loopResources());
    return f;
  }

  @Bean
  NettyServerCustomizer balancedEventLoopsCustomizer(BalancedEventLoops loops) {
    return loops.customizer();
  }

  @Bean
  ConnectionGuard connectionGuard(FlashVecProperties props, HttpRejections rejections) {
    return new ConnectionGuard(props.http(), rejections);
  }

  @Bean
  NettyServerCustomizer connectionGuardCustomizer(ConnectionGuard guard) {
    return guard.customizer();
  }
}
