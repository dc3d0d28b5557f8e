import { Module } from '@nestjs/common';
import { BundleInspector } from '@weir/sandbox';
import { BundleStorage } from './bundle-storage';
import { DeploymentRulesSchemas } from './deployment-rules-schemas';
import { BundlesController } from './bundles.controller';
import { BundlesRepository } from './bundles.repository';
import { BundlesService } from './bundles.service';

/** Job bundles: multipart upload streamed to S3, immutable versions, the manifest validated and checked against the code. */
@Module({
  controllers: [BundlesController],
  // One inspector per control plane: it bounds how many bundle checks (a process each) run at once.
  providers: [BundlesRepository, BundleStorage, BundlesService, DeploymentRulesSchemas, { provide: BundleInspector, useFactory: () => new BundleInspector() }],
  exports: [BundlesService, DeploymentRulesSchemas],
})
export class BundlesModule {}
