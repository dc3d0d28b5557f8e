import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeyRevocations } from './api-key-revocations';
import { ApiKeyUsage } from './api-key-usage';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { AuthGuard } from './auth.guard';
import { QuotaService } from './quota.service';
import { TenantDataSweeper } from './tenant-data-sweeper';
import { TenantDb } from './tenant-db';
import { TenantDeletionRepository } from './tenant-deletion.repository';
import { TenantDeletionService } from './tenant-deletion.service';
import { TenantDirectory } from './tenant-directory';
import { CurrentTenantController, TenantsController } from './tenants.controller';
import { TenantsRepository } from './tenants.repository';
import { TenantsService } from './tenants.service';

/**
 * Tenants, API keys, the global auth guard, TenantDb and quotas. Global, so every feature module injects
 * TenantDb, QuotaService and ApiKeyAuthenticator without importing it.
 */
@Global()
@Module({
  controllers: [TenantsController, CurrentTenantController, ApiKeysController],
  providers: [
    TenantDb,
    ApiKeyAuthenticator,
    ApiKeyRevocations,
    ApiKeyUsage,
    QuotaService,
    TenantsRepository,
    TenantDirectory,
    TenantsService,
    TenantDeletionRepository,
    TenantDataSweeper,
    TenantDeletionService,
    ApiKeysRepository,
    ApiKeysService,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [TenantDb, ApiKeyAuthenticator, QuotaService, TenantsService],
})
export class TenancyModule {}
