package io.flashvec.api;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Entry point: {@code java -jar flashvec.jar} (see the {@code ./flashvec run} script). */
@SpringBootApplication
@ConfigurationPropertiesScan
public class FlashVecApplication {

  public static void main(String[] args) {
    SpringApplication.run(FlashVecApplication.class, args);
  }
}
