import { Module } from '@nestjs/common';
import { BundleStorage } from './bundle-storage';
import { BundlesController } from './bundles.controller';
import { BundlesRepository } from './bundles.repository';
import { BundlesService } from './bundles.service';

/** Job bundles: multipart upload streamed to S3, immutable versions, manifest validation. */
@Module({
  controllers: [BundlesController],
  providers: [BundlesRepository, BundleStorage, BundlesService],
  exports: [BundlesService],
})
export class BundlesModule {}
