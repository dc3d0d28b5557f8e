import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ADMIN_TOKEN_SCHEME, API_KEY_SCHEME, controllerRoutes } from '../tenancy';
import { applyRouteSecurity } from './route-security';

/**
 * The OpenAPI document of the REST API, generated from the controllers' decorators; each operation's security from
 * the same metadata the auth guard reads (route-security.ts).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Weir control plane')
    .setDescription('Stream processing as a service. Every error is RFC 9457 problem details (application/problem+json).')
    .setVersion('0.1.0')
    .addServer('http://127.0.0.1:8080', 'A local control plane: npm run start:control-plane (WEIR_HTTP_HOST:WEIR_HTTP_PORT)')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'weir_<id>_<secret>', description: 'A tenant API key' }, API_KEY_SCHEME)
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: 'The platform admin token (WEIR_ADMIN_TOKEN)' }, ADMIN_TOKEN_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config);
  // Set here: DocumentBuilder wants a license URL, and there is none to give for a proprietary license.
  document.info.license = { name: 'UNLICENSED (proprietary)' };
  applyRouteSecurity(document, controllerRoutes(app));
  return document;
}
