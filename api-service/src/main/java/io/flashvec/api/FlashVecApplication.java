package io.flashvec.api;

import io.flashvec.api.system.JvmFlags;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Entry point: {@code java -jar flashvec.jar} (see the {@code ./flashvec run} script). */
@SpringBootApplication
@ConfigurationPropertiesScan
public class FlashVecApplication {

  public static void main(String[] args) {
    if (args.length > 0 && args[0].equals(JvmFlags.OPTION)) {
      System.exit(JvmFlags.print(args, System.out, System.err));
    }
    String missing = JvmFlags.missingModule();
    if (missing != null) {
      // the distance kernels need it: without it the first write or search fails, so refuse now
      System.err.println(missing);
      System.exit(2);
    }
    SpringApplication.run(FlashVecApplication.class, args);
  }
}
